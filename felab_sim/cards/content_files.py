"""The simulator's part of the lesson content files: scenarios.yaml and parameter_sets.yaml.

import_lessons and export_lessons read and write these through the two sections here, which
FelabSimConfig.ready hands to lessons (lessons/content_sections.py says what a section is;
felab_sim imports nothing of lessons).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from ..engine.core.params import ParamError
from ..engine.sweep.sweep_params import SweepParams
from ..models import ParameterSet, Scenario

SCENARIO_FIELDS = ("name", "description", *SweepParams.FLAT_KEYS)
PARAMETER_SET_FIELDS = ("calculator", "name", "description", "params")


class ScenariosFile:
    """Simulator scenarios that cards cite by slug."""

    file_name = "scenarios.yaml"

    def import_file(self, file: Any) -> dict[str, Scenario]:
        scenarios: dict[str, Scenario] = {}
        for entry in file.entries:
            slug = str(file.require(entry, "slug"))
            values = {name: entry[name] for name in SCENARIO_FIELDS if name in entry}
            if isinstance(values.get("levels"), list):
                values["levels"] = ",".join(str(level) for level in values["levels"])
            try:
                SweepParams.from_flat({k: v for k, v in values.items() if k in SweepParams.FLAT_KEYS})
            except ParamError as error:
                file.refuse(f"scenario {slug}: {error}")
            scenario = Scenario.objects.filter(slug=slug).first()
            created = scenario is None
            scenario = scenario or Scenario(slug=slug, name=slug)
            file.merge(f"scenario {slug}", scenario, created, values)
            scenarios[slug] = scenario
        return scenarios

    def export_entries(self) -> list[dict[str, Any]]:
        return [
            {"slug": scenario.slug, **{name: getattr(scenario, name) for name in SCENARIO_FIELDS}}
            for scenario in Scenario.objects.order_by("slug")
        ]


class ParameterSetsFile:
    """Calculators' named parameter sets, which cards cite as {{calc.SLUG.OUTPUT}}."""

    file_name = "parameter_sets.yaml"

    def import_file(self, file: Any) -> dict[str, ParameterSet]:
        parameter_sets: dict[str, ParameterSet] = {}
        for entry in file.entries:
            slug = str(file.require(entry, "slug"))
            values = {name: entry.get(name) for name in PARAMETER_SET_FIELDS}
            values["calculator"] = str(values["calculator"] or "")
            values["name"] = str(values["name"] or slug)
            values["description"] = file.text(entry, "description")
            values["params"] = values["params"] or {}
            candidate = ParameterSet(slug=slug, **values)
            try:
                candidate.clean()  # validates the params by the calculator's declaration
            except ValidationError as error:
                file.refuse(f"parameter set {slug}: {'; '.join(error.messages)}")
            values["params"] = candidate.params
            parameter_set = ParameterSet.objects.filter(slug=slug).first()
            created = parameter_set is None
            parameter_set = parameter_set or ParameterSet(slug=slug)
            file.merge(f"parameter set {slug}", parameter_set, created, values)
            parameter_sets[slug] = parameter_set
        return parameter_sets

    def export_entries(self) -> list[dict[str, Any]]:
        return [
            {
                "slug": parameter_set.slug,
                "calculator": parameter_set.calculator,
                "name": parameter_set.name,
                "description": parameter_set.description,
                "params": parameter_set.params_for_file(),
            }
            for parameter_set in ParameterSet.objects.order_by("slug")
        ]

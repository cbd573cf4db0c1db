"""Lesson content as YAML files, so instructors can keep lessons in git.

Layout under a content directory:

    glossary.yaml                     every word to know: term, definition, example
    scenarios.yaml                    simulator scenarios that cards cite by slug
    parameter_sets.yaml               calculators' named parameter sets ({{calc.SLUG.OUTPUT}})
    <course-slug>/course.yaml         the course: slug, title, description, order
    <course-slug>/lesson-NN-<slug>.yaml  one lesson and its cards, in step order

Cards name their glossary terms in the order the card lists them, their scenario by
slug, and the figures of their "Computed live" panel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import transaction

from felab_sim import figures
from felab_sim.core import citations
from felab_sim.model import ParamError, SweepParams
from felab_sim.models import ParameterSet, Scenario

from .models import Card, CardFigure, CardTerm, Course, GlossaryTerm, Lesson

CONTENT_DIR = Path(__file__).resolve().parent / "content"

COURSE_FIELDS = ("title", "description", "order")
LESSON_FIELDS = ("number", "title", "order")
TERM_FIELDS = ("definition", "example")
SCENARIO_FIELDS = ("name", "description", *SweepParams.FLAT_KEYS)
PARAMETER_SET_FIELDS = ("calculator", "name", "description", "params")
FIGURE_FIELDS = ("label", "figure", "stated")
CARD_FIELDS = ("title", *Card.TEXT_FIELDS)


class ContentError(ValueError):
    """A content file that cannot be imported, with the file and the reason."""


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)

    def summary(self) -> str:
        return f"{len(self.created)} created, {len(self.updated)} updated, {self.unchanged} unchanged"


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line text as YAML block scalars, so diffs read like the lesson."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def _dump(data: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(data, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False, width=10_000)
    path.write_text(text, encoding="utf-8")


def _load(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ContentError(f"{path}: not valid YAML ({error})") from error


def _require(data: Any, key: str, path: Path) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise ContentError(f"{path}: missing '{key}'")
    return data[key]


def _sync(model_obj: Any, values: dict[str, Any], created: bool) -> bool:
    """Save only what changed, so a second import writes nothing. True when saved."""
    changed = [name for name, value in values.items() if getattr(model_obj, name) != value]
    for name in changed:
        setattr(model_obj, name, values[name])
    if created or changed:
        model_obj.save()
    return created or bool(changed)


def _record(report: ImportReport, label: str, created: bool, changed: bool) -> None:
    if created:
        report.created.append(label)
    elif changed:
        report.updated.append(label)
    else:
        report.unchanged += 1


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name, "")
    return "" if value is None else str(value).rstrip("\n")


@transaction.atomic
def import_content(directory: Path = CONTENT_DIR) -> ImportReport:
    """Create or update courses, lessons, cards and terms by natural key."""
    report = ImportReport()
    if not directory.is_dir():
        raise ContentError(f"{directory}: no such content directory")

    glossary_path = directory / "glossary.yaml"
    terms: dict[str, GlossaryTerm] = {}
    if glossary_path.exists():
        for entry in _load(glossary_path) or []:
            name = str(_require(entry, "term", glossary_path))
            term, created = GlossaryTerm.objects.get_or_create(
                term=name, defaults={name_: _text(entry, name_) for name_ in TERM_FIELDS}
            )
            changed = _sync(term, {f: _text(entry, f) for f in TERM_FIELDS}, created)
            _record(report, f"term {name}", created, changed)
            terms[name] = term

    scenarios = _import_scenarios(directory / "scenarios.yaml", report)
    _import_parameter_sets(directory / "parameter_sets.yaml", report)

    for course_path in sorted(directory.glob("*/course.yaml")):
        course_data = _load(course_path)
        slug = str(_require(course_data, "slug", course_path))
        course, created = Course.objects.get_or_create(
            slug=slug, defaults={"title": _require(course_data, "title", course_path)}
        )
        values = {"title": str(course_data["title"]), "description": _text(course_data, "description"),
                  "order": int(course_data.get("order", 0))}  # fmt: skip
        _record(report, f"course {slug}", created, _sync(course, values, created))
        for lesson_path in sorted(course_path.parent.glob("lesson-*.yaml")):
            _import_lesson(course, lesson_path, terms, scenarios, report)
    return report


def _import_scenarios(path: Path, report: ImportReport) -> dict[str, Scenario]:
    scenarios: dict[str, Scenario] = {}
    if not path.exists():
        return scenarios
    for entry in _load(path) or []:
        slug = str(_require(entry, "slug", path))
        values = {name: entry[name] for name in SCENARIO_FIELDS if name in entry}
        if isinstance(values.get("levels"), list):
            values["levels"] = ",".join(str(level) for level in values["levels"])
        try:
            SweepParams.from_flat({k: v for k, v in values.items() if k in SweepParams.FLAT_KEYS})
        except ParamError as error:
            raise ContentError(f"{path}: scenario {slug}: {error}") from error
        scenario, created = Scenario.objects.get_or_create(
            slug=slug, defaults={"name": values.get("name", slug)}
        )
        _record(report, f"scenario {slug}", created, _sync(scenario, values, created))
        scenarios[slug] = scenario
    return scenarios


def _import_parameter_sets(path: Path, report: ImportReport) -> None:
    if not path.exists():
        return
    for entry in _load(path) or []:
        slug = str(_require(entry, "slug", path))
        values = {name: entry.get(name) for name in PARAMETER_SET_FIELDS}
        values["description"] = _text(entry, "description")
        values["params"] = values["params"] or {}
        parameter_set, created = ParameterSet.objects.get_or_create(
            slug=slug, defaults={"calculator": str(values["calculator"]), "name": str(values["name"] or slug)}
        )
        candidate = ParameterSet(slug=slug, **values)
        try:
            candidate.clean()  # validates the params by the calculator's declaration
        except ValidationError as error:
            raise ContentError(f"{path}: parameter set {slug}: {'; '.join(error.messages)}") from error
        values["params"] = candidate.params
        _record(report, f"parameter set {slug}", created, _sync(parameter_set, values, created))


def _import_lesson(
    course: Course,
    path: Path,
    terms: dict[str, GlossaryTerm],
    scenarios: dict[str, Scenario],
    report: ImportReport,
) -> None:
    data = _load(path)
    slug = str(_require(data, "slug", path))
    number = int(_require(data, "number", path))
    lesson, created = Lesson.objects.get_or_create(
        course=course, slug=slug, defaults={"number": number, "title": _require(data, "title", path)}
    )
    values = {"number": number, "title": str(data["title"]), "order": int(data.get("order", number))}
    _record(report, f"lesson {course.slug}/{slug}", created, _sync(lesson, values, created))

    for card_data in _require(data, "cards", path) or []:
        step = int(_require(card_data, "step", path))
        label = f"card {course.slug}/{slug}/{step}"
        card, created = Card.objects.get_or_create(
            lesson=lesson, step=step, defaults={"title": _require(card_data, "title", path)}
        )
        values: dict[str, Any] = {name: _text(card_data, name) for name in CARD_FIELDS}
        values["scenario"] = _scenario_for(card_data.get("scenario"), scenarios, path, step)
        _check_figures(values, card_data.get("figures") or [], path, step)
        changed = _sync(card, values, created)
        terms_changed = _sync_card_terms(card, card_data.get("terms") or [], terms, path)
        figures_changed = _sync_card_figures(card, card_data.get("figures") or [])
        _record(report, label, created, changed or terms_changed or figures_changed)


def _scenario_for(slug: Any, scenarios: dict[str, Scenario], path: Path, step: int) -> Scenario | None:
    if not slug:
        return None
    if slug not in scenarios:
        raise ContentError(f"{path}: card step {step} names unknown scenario '{slug}'")
    return scenarios[slug]


def _check_figures(values: dict[str, Any], figure_rows: list[dict[str, Any]], path: Path, step: int) -> None:
    """Refuse a card whose text or panel cites a live figure its scenario cannot give."""
    scenario = values["scenario"]
    params = scenario.sweep_params() if scenario else None
    texts = [values[name] for name in Card.TEXT_FIELDS]
    names = [str(row.get("figure", "")) for row in figure_rows]
    texts += [figures.placeholder(name) for name in names if not citations.is_calc_figure(name)]
    problems = figures.problems(texts, params)
    cited = [found for text in texts for found in citations.in_text(text)]
    for name in filter(citations.is_calc_figure, names):
        if (found := citations.parse_figure(name)) is None:
            problems.append(f"{name}: write a calculator's figure as calc.SET_SLUG.OUTPUT_KEY")
        else:
            cited.append(found)
    problems += citations.problems(cited, ParameterSet.objects.calculators_by_slug(citations.slugs(cited)))
    if problems:
        raise ContentError(f"{path}: card step {step}: {'; '.join(problems)}")


def _sync_card_figures(card: Card, rows: list[dict[str, Any]]) -> bool:
    wanted = [tuple(str(row.get(name, "")) for name in FIGURE_FIELDS) for row in rows]
    current = list(card.figures.order_by("order").values_list(*FIGURE_FIELDS))
    if current == wanted:
        return False
    card.figures.all().delete()
    CardFigure.objects.bulk_create(
        CardFigure(card=card, order=index, **dict(zip(FIGURE_FIELDS, row, strict=True)))
        for index, row in enumerate(wanted, start=1)
    )
    return True


def _sync_card_terms(card: Card, names: list[str], terms: dict[str, GlossaryTerm], path: Path) -> bool:
    wanted = []
    for name in names:
        if name not in terms:
            raise ContentError(f"{path}: card step {card.step} names unknown glossary term '{name}'")
        wanted.append(terms[name].pk)
    current = list(card.card_terms.order_by("order").values_list("term_id", flat=True))
    if current == wanted:
        return False
    card.card_terms.all().delete()
    CardTerm.objects.bulk_create(
        CardTerm(card=card, term_id=term_id, order=index) for index, term_id in enumerate(wanted, start=1)
    )
    return True


def export_content(directory: Path = CONTENT_DIR) -> list[Path]:
    """Write every course, lesson, card and term to YAML files; returns the files written."""
    written: list[Path] = []
    glossary = [
        {"term": t.term, "definition": t.definition, "example": t.example}
        for t in GlossaryTerm.objects.order_by("term")
    ]
    _dump(glossary, directory / "glossary.yaml")
    written.append(directory / "glossary.yaml")
    scenarios = [
        {"slug": scenario.slug, **{name: getattr(scenario, name) for name in SCENARIO_FIELDS}}
        for scenario in Scenario.objects.order_by("slug")
    ]
    if scenarios:
        _dump(scenarios, directory / "scenarios.yaml")
        written.append(directory / "scenarios.yaml")
    parameter_sets = [
        {
            "slug": parameter_set.slug,
            "calculator": parameter_set.calculator,
            "name": parameter_set.name,
            "description": parameter_set.description,
            "params": parameter_set.params_for_file(),
        }
        for parameter_set in ParameterSet.objects.order_by("slug")
    ]
    if parameter_sets:
        _dump(parameter_sets, directory / "parameter_sets.yaml")
        written.append(directory / "parameter_sets.yaml")
    courses = Course.objects.prefetch_related("lessons__cards__card_terms__term", "lessons__cards__figures")
    for course in courses.prefetch_related("lessons__cards__scenario"):
        course_dir = directory / course.slug
        _dump({"slug": course.slug, "title": course.title, "description": course.description,
               "order": course.order}, course_dir / "course.yaml")  # fmt: skip
        written.append(course_dir / "course.yaml")
        for lesson in course.lessons.all():
            cards = []
            for card in sorted(lesson.cards.all(), key=lambda c: c.step):
                entry: dict[str, Any] = {"step": card.step}
                entry.update({name: getattr(card, name) for name in CARD_FIELDS})
                if card.scenario:
                    entry["scenario"] = card.scenario.slug
                if figure_rows := sorted(card.figures.all(), key=lambda f: f.order):
                    entry["figures"] = [
                        {name: getattr(f, name) for name in FIGURE_FIELDS} for f in figure_rows
                    ]
                entry["terms"] = [
                    ct.term.term for ct in sorted(card.card_terms.all(), key=lambda ct: ct.order)
                ]
                cards.append(entry)
            path = course_dir / f"lesson-{lesson.number:02d}-{lesson.slug}.yaml"
            _dump({"number": lesson.number, "slug": lesson.slug, "title": lesson.title,
                   "order": lesson.order, "cards": cards}, path)  # fmt: skip
            written.append(path)
    return written

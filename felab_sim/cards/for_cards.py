"""What lessons' cards ask of the simulator's rows (lessons/simulator.py says what): the
parameter sets they cite, the sweep of their scenario, and the pages where a student turns
the knobs. FelabSimConfig.ready hands it to lessons as the app's ``card_simulator``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import live
from ..engine.core.calculator import Result
from ..engine.sweep.metrics import SweepResult
from ..engine.sweep.sweep_params import SweepParams
from ..models import ParameterSet, calculator_page_url


@dataclass(frozen=True)
class CitedParameterSet:
    slug: str
    calculator: str
    result: Result | None
    page_url: str


class CardSimulator:
    def cited_sets(self, slugs: Iterable[str]) -> dict[str, CitedParameterSet]:
        return {
            found.slug: CitedParameterSet(found.slug, found.calculator, found.result(), found.page_url())
            for found in ParameterSet.objects.filter(slug__in=set(slugs))
        }

    def calculators_by_slug(self, slugs: Iterable[str]) -> dict[str, str]:
        return ParameterSet.objects.calculators_by_slug(slugs)

    def sweep(self, params: SweepParams) -> SweepResult:
        return live.cached_sweep(params)

    def sweep_chart(self, params: SweepParams, *, compact: bool) -> str:
        return live.cached_figure(params, compact=compact)

    def sim_query(self, params: SweepParams) -> str:
        return live.sim_query(params)

    def calculator_page_url(self, result: Result) -> str:
        return calculator_page_url(result)

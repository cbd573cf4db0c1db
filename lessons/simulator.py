"""What a card needs computed from the simulator's rows, asked of the app that keeps them.

A card names a scenario and cites parameter sets: both are felab_sim's models, which lessons
does not import. felab_sim's AppConfig carries a ``card_simulator`` (set in
FelabSimConfig.ready) with the methods of :class:`CardSimulator`; lessons finds it among the
installed apps. What needs no rows (parsing citations, the sweep's parameters, printing a
number) lessons takes from felab_sim's pure code directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Protocol

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from felab_sim.engine.core.calculator import Result
from felab_sim.engine.sweep.metrics import SweepResult
from felab_sim.engine.sweep.sweep_params import SweepParams


class CitedSet(Protocol):
    """A parameter set as a lesson uses it: its calculator, its outputs and its page."""

    slug: str
    calculator: str
    result: Result | None  # None if the set no longer validates
    page_url: str  # the calculator's page with the set's settings filled in


class CardSimulator(Protocol):
    def cited_sets(self, slugs: Iterable[str]) -> dict[str, CitedSet]:
        """The named parameter sets, in one query whatever their number."""

    def calculators_by_slug(self, slugs: Iterable[str]) -> dict[str, str]:
        """Each named set's calculator (how citations are checked)."""

    def sweep(self, params: SweepParams) -> SweepResult:
        """The simulated sweep, cached by its parameters."""

    def sweep_chart(self, params: SweepParams, *, compact: bool) -> str:
        """The sweep's chart as plotly JSON."""

    def sim_query(self, params: SweepParams) -> str:
        """The /sim/ query string that shows these parameters."""

    def calculator_page_url(self, result: Result) -> str:
        """The calculator's page at a result's settings."""


@cache
def simulator() -> CardSimulator:
    """The installed app's card simulator (felab_sim's)."""
    for config in apps.get_app_configs():
        if (found := getattr(config, "card_simulator", None)) is not None:
            return found
    raise ImproperlyConfigured("no installed app provides the card simulator (felab_sim does)")

"""What a card computes live from the simulator: its scenario's sweep and chart, the results
of the parameter sets it cites, and its "Computed live" panel, each number the card states
beside the model's value and where to turn its knobs.

The simulator's rows are reached through lessons/simulator.py; the values are read and
printed by felab_sim's pure code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from django.urls import reverse

from felab_sim.engine.core.calculator import Result
from felab_sim.engine.core.numbers import format_like
from felab_sim.engine.course import citations, facts, live_numbers
from felab_sim.engine.sweep.metrics import SweepResult
from felab_sim.engine.sweep.sweep_params import SweepParams

from .card_citations import is_measured_number
from .simulator import CitedSet, simulator


class PanelNumber(Protocol):
    """One row of the panel as the card keeps it (lessons.models.CardNumber)."""

    label: str
    stated: str
    live: str  # a sweep's live number without "sim.", calc.SET.OUTPUT or measured.RUN.FIELD
    note: str


class LiveCard(Protocol):
    """What the panel reads of a card (lessons.models.Card), each only when a row needs it."""

    scenario_params: SweepParams | None
    live_result: SweepResult | None
    calc_results: Mapping[str, Result | None]
    panel_numbers: Sequence[PanelNumber]


def sweep_of(params: SweepParams | None) -> SweepResult | None:
    """The scenario's simulated sweep (cached by parameters), or None without one."""
    return None if params is None else simulator().sweep(params)


def chart_of(params: SweepParams | None) -> str | None:
    """The scenario's chart as plotly JSON, compact as a card shows it, or None without one."""
    return None if params is None else simulator().sweep_chart(params, compact=True)


def sim_url(params: SweepParams | None) -> str:
    """/sim/ at the scenario's settings; /sim/ as it opens without one."""
    return reverse("sim") + ("?" + simulator().sim_query(params) if params else "")


def cited_sets(cited: Iterable[citations.Citation]) -> dict[str, CitedSet]:
    """The parameter sets the citations name, by slug: one query whatever their number, none for none."""
    slugs = citations.slugs(cited)
    return simulator().cited_sets(slugs) if slugs else {}


def results_of(sets: Mapping[str, CitedSet]) -> dict[str, Result | None]:
    """Each set's computed result by slug (None where the set no longer validates)."""
    return {slug: found.result for slug, found in sets.items()}


def panel_rows(card: LiveCard) -> list[dict[str, str]]:
    """The panel: each number the card states, beside the model's value, and where to turn its
    knobs: the calculator's page or /sim/ at the settings it was computed from (empty when
    nothing was computed). A row citing a published measurement (``measured.RUN.FIELD``) shows
    that run's number and names the run instead: the model would give the same quantity a
    second value."""
    return [
        {
            "label": number.label,
            "stated": number.stated,
            "live": _live_text(card, number.live, number.stated),
            "url": _live_url(card, number.live),
            "note": number.note,
            "source": _measured_source(number.live),
        }
        for number in card.panel_numbers
    ]


def published_sources(numbers: Iterable[PanelNumber]) -> list[str]:
    """The published runs the panel's rows quote, each named once."""
    return list(dict.fromkeys(source for number in numbers if (source := _measured_source(number.live))))


def _live_text(card: LiveCard, name: str, stated: str) -> str:
    """The live value with the stated number's decimals, so that equal numbers look equal."""
    if is_measured_number(name):
        try:
            return format_like(facts.parse(name).value, stated)
        except facts.UnknownFact:
            return format_like(None, stated)
    if cited := citations.parse_calc_number(name):
        value = citations.value_of(cited, card.calc_results)
        return value if isinstance(value, str) else format_like(value, stated)
    return format_like(live_numbers.value_of(name, card.live_result), stated)


def _live_url(card: LiveCard, name: str) -> str:
    if is_measured_number(name):
        return ""  # a published number has no settings to change
    if citations.is_calc_number(name):
        cited = citations.parse_calc_number(name)
        result = card.calc_results.get(cited.slug) if cited else None
        if result is None or cited.key not in result.outputs:
            return ""
        return f"{simulator().calculator_page_url(result)}#output-{cited.key}"
    params = card.scenario_params
    return f"{sim_url(params)}#sim-results" if params is not None else ""


def _measured_source(name: str) -> str:
    """Where a published measurement was published; empty for a computed number."""
    if not is_measured_number(name):
        return ""
    try:
        return facts.parse(name).source
    except facts.UnknownFact:
        return ""

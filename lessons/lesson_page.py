"""The lesson page: its visible cards, ready to show, and where to try their numbers."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from felab_sim.engine.calculators import CALCULATORS

from . import card_live
from .models import Card, CardNumber, Lesson
from .simulator import CitedSet


@dataclass(frozen=True)
class TryIt:
    """A link from a lesson to a simulator page where its numbers can be changed."""

    title: str
    url: str


@dataclass(frozen=True)
class LessonPage:
    cards: list[Card]
    try_it: list[TryIt]


def page_of(lesson: Lesson, *, drafts: bool) -> LessonPage:
    """The lesson's visible cards in step order (drafts too with drafts=True), and its links.

    Three queries whatever the number of cards: the cards (with scenarios), their live numbers,
    and the parameter sets they cite, which every card shares.
    """
    cards = list(
        Card.objects.visible(drafts=drafts)
        .filter(lesson=lesson)
        .select_related("scenario")
        .prefetch_related(models.Prefetch("numbers", queryset=CardNumber.objects.order_by("order")))
        .order_by("step")
    )
    sets = card_live.cited_sets(found for card in cards for found in card.calc_citations())
    results = card_live.results_of(sets)
    for card in cards:
        card.lesson = lesson  # already loaded: spares a query per card
        card.calc_results = results  # a superset of each card's own: one query, not one per card
    return LessonPage(cards=cards, try_it=_try_it(cards, sets))


def _try_it(cards: list[Card], sets: dict[str, CitedSet]) -> list[TryIt]:
    """Where to turn the knobs of what these cards compute: the sweep, then each calculator once."""
    links: list[TryIt] = []
    if sweep_card := next((card for card in cards if card.scenario_id), None):
        links.append(TryIt("The concurrency sweep, simulated", sweep_card.sim_url()))
    first_set_of: dict[str, CitedSet] = {}
    for card in cards:
        for cited in card.calc_citations():
            if cited.slug in sets:
                first_set_of.setdefault(sets[cited.slug].calculator, sets[cited.slug])
    for name, parameter_set in first_set_of.items():
        if (calculator := CALCULATORS.get(name)) is None:
            continue
        # The calculator's page, opened at the first set the lesson cites.
        links.append(TryIt(calculator.title, parameter_set.page_url))
    return links

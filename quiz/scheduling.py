"""Spaced review with FSRS: replay a learner's history, preview the four choices.

Pure Python on top of the fsrs package, no Django models: the models hand in
(rating, when) pairs and store what comes back.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import fsrs

from .clock import as_utc

# No fuzzing: the preview printed on a button is a promise, so pressing it must
# schedule exactly that, and replaying the same history must give the same card.
SCHEDULER = fsrs.Scheduler(enable_fuzzing=False)


# "Due" has one definition, and every page (review, progress, the rating's "comes back",
# the buttons' previews) uses it: a card is due once its due time has come. Any time left,
# however little, reads as at least "in 1 min", so "now" is said of due cards only.


def is_due(due: datetime, now: datetime) -> bool:
    return due <= now


def new_card(card_id: int, at: datetime) -> fsrs.Card:
    # An explicit id: fsrs would otherwise derive one from the clock and sleep a millisecond.
    return fsrs.Card(card_id=card_id, due=as_utc(at))


def replay(card_id: int, history: Iterable[tuple[int, datetime]], start: datetime) -> fsrs.Card:
    """The fsrs card after the given reviews, oldest first; a new card when there are none."""
    card = new_card(card_id, start)
    for rating, reviewed_at in history:
        card, _ = SCHEDULER.review_card(card, fsrs.Rating(rating), review_datetime=as_utc(reviewed_at))
    return card


def retrievability(fsrs_card: dict[str, Any], at: datetime) -> float | None:
    """FSRS's predicted chance of recall at `at` for a stored card (ScheduleState.fsrs_card): its
    forgetting curve, (1 + FACTOR × t ÷ stability) ^ DECAY, with t the days since the last review.
    The fsrs package's own get_card_retrievability counts t in whole days, so it reads 100% all
    of a review's first day; this counts the fraction too. None for a card never reviewed."""
    stability, last = fsrs_card.get("stability"), fsrs_card.get("last_review")
    if not stability or not last:
        return None
    return _recall(stability, datetime.fromisoformat(last), at)


def card_retrievability(card: fsrs.Card, at: datetime) -> float | None:
    """retrievability() of an fsrs card in hand, without storing it first."""
    if not card.stability or card.last_review is None:
        return None
    return _recall(card.stability, card.last_review, at)


def _recall(stability: float, last: datetime, at: datetime) -> float:
    elapsed = (as_utc(at) - as_utc(last)).total_seconds() / 86400
    return (1 + SCHEDULER._FACTOR * max(elapsed, 0.0) / stability) ** SCHEDULER._DECAY


def due_ones(card_id: int, candidates: Sequence[tuple[int, datetime]]) -> list[tuple[int, datetime]]:
    """Of the candidate reviews (oldest first), those given when the schedule replayed from the
    ones before them had the subject due: the first always. Answers sent at once, each read the
    subject as new or due before any was stored; replayed, only the first of them was a review."""
    kept: list[tuple[int, datetime]] = []
    card = None
    for rating, reviewed_at in candidates:
        if card is None or is_due(card.due, as_utc(reviewed_at)):
            card = card or new_card(card_id, reviewed_at)
            card, _ = SCHEDULER.review_card(card, fsrs.Rating(rating), review_datetime=as_utc(reviewed_at))
            kept.append((rating, reviewed_at))
    return kept


class ScheduleFields(TypedDict):
    """What a schedule row (quiz.models.ScheduleState) stores of a learner's ratings of one thing."""

    fsrs_card: dict[str, Any]
    due: datetime
    last_rating: int
    last_reviewed_at: datetime
    review_count: int


def schedule_after(subject_id: int, history: Sequence[tuple[int, datetime]]) -> ScheduleFields:
    """The schedule after the ratings in ``history`` (at least one, oldest first), replayed from
    the first of them."""
    card = replay(subject_id, history, start=history[0][1])
    return {
        "fsrs_card": card.to_dict(),
        "due": card.due,
        "last_rating": history[-1][0],
        "last_reviewed_at": history[-1][1],
        "review_count": len(history),
    }


def previews(card: fsrs.Card, at: datetime) -> dict[int, datetime]:
    """When the card would be due after each rating given at `at`, keyed by rating value."""
    # review_card copies the card it is given, so the four calls do not interfere.
    return {
        int(rating): SCHEDULER.review_card(card, rating, review_datetime=as_utc(at))[0].due
        for rating in fsrs.Rating
    }


@functools.cache
def _first_rating_waits() -> dict[int, timedelta]:
    # Without fuzzing, a new card's wait after its first rating does not depend on when it is
    # given: work the four out once, not on every card page a first-time visitor opens.
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return {rating: due - start for rating, due in previews(new_card(0, start), start).items()}


def first_rating_previews(at: datetime) -> dict[int, datetime]:
    """previews() for a card never rated, rated at `at`."""
    return {rating: as_utc(at) + wait for rating, wait in _first_rating_waits().items()}


def humanize_interval(delta: timedelta) -> str:
    """'in 10 min', 'in 5 hours', 'in 3 days': how a student reads a due time."""
    if delta <= timedelta(0):
        return "now"  # due, by is_due's definition
    minutes = delta.total_seconds() / 60
    if minutes < 59.5:
        return _plural(max(round(minutes), 1), "min", "min")  # never "in 0 min": not due yet
    hours = minutes / 60
    if hours < 23.5:
        return _plural(round(hours), "hour", "hours")
    days = hours / 24
    if days < 45:
        return _plural(round(days), "day", "days")
    if days < 365:
        return _plural(round(days / 30.4), "month", "months")
    return _plural(round(days / 365.25, 1), "year", "years")


def _plural(amount: float, one: str, many: str) -> str:
    shown = int(amount) if float(amount).is_integer() else amount
    return f"in {shown} {one if shown == 1 else many}"

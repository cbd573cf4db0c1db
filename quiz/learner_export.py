"""Everything recorded about one learner, as plain JSON-ready data (/progress/export.json):
their showings with the ratings given, their schedules, their practice attempts and their runs.

A learner's rows grow without bound (1,330 practice attempts were 0.9 MB in one response), so
the export comes in pages: page N holds the N-th EXPORT_PAGE_ROWS rows of each list, and names
the next page while any list has more. Each list's order never changes once a row is recorded
(a row recorded meanwhile comes at its end), so the pages together hold every row once; only a
log in that joins a session's earlier work to the account while its pages are being read
shifts them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from felab_sim.models import Run
from lessons.models import Card

from . import clock
from .learners import Learner
from .models import (
    CardState,
    LearnerProfile,
    PracticeAttempt,
    PracticeSet,
    PracticeState,
    ScheduleState,
    Showing,
)

EXPORT_PAGE_ROWS = 500


def _page_of(rows: QuerySet, page: int) -> tuple[list[Any], bool]:
    """The page's rows of ``rows`` and whether any come after them (one query)."""
    start = (page - 1) * EXPORT_PAGE_ROWS
    found = list(rows[start : start + EXPORT_PAGE_ROWS + 1])
    return found[:EXPORT_PAGE_ROWS], len(found) > EXPORT_PAGE_ROWS


def export_data(learner: Learner, page: int = 1) -> tuple[dict[str, Any], bool]:
    """Page ``page`` (from 1) of the learner's own rows, nobody else's: showings oldest first,
    practice attempts in the order first answered (a later try changes a row's time, never its
    place), schedules in the order each was made, runs oldest first; and whether a next page
    has more."""
    showings, more_showings = _page_of(
        Showing.objects.for_learner(learner)
        .select_related("card__lesson__course", "review")
        .prefetch_related("openings")
        .order_by("shown_at", "id"),
        page,
    )
    states, more_states = _page_of(
        CardState.objects.for_learner(learner).select_related("card__lesson__course").order_by("id"), page
    )
    attempts, more_attempts = _page_of(
        PracticeAttempt.objects.for_learner(learner).select_related("template").order_by("id"), page
    )
    practice_states, more_practice_states = _page_of(
        PracticeState.objects.for_learner(learner).select_related("template").order_by("id"), page
    )
    practice_sets, more_practice_sets = _page_of(
        PracticeSet.objects.for_learner(learner).prefetch_related("items__template").order_by("number"), page
    )
    user = learner.user
    # A run is an account's (started_by): an anonymous visitor cannot start one.
    runs, more_runs = (
        _page_of(
            Run.objects.filter(started_by=user)
            .prefetch_related("levels", "orders")
            .order_by("queued_at", "pk"),
            page,
        )
        if user is not None
        else ([], False)
    )
    data = {
        "learner": {
            "account": user.get_username() if user is not None else None,
            "shares_name_with_instructors": user is not None and LearnerProfile.of(user).share_name,
        },
        "exported_at": clock.now().isoformat(),
        "page": page,
        "showings": [_showing(showing) for showing in showings],
        "schedule": [_card_schedule(state) for state in states],
        "practice_attempts": [_practice_attempt(attempt) for attempt in attempts],
        "practice_schedule": [_practice_schedule(state) for state in practice_states],
        "practice_sets": [_practice_set(practice_set) for practice_set in practice_sets],
        "runs": [run.as_export() for run in runs],
    }
    more = (
        more_showings
        or more_states
        or more_attempts
        or more_practice_states
        or more_practice_sets
        or more_runs
    )
    return data, more


def _card_key(card: Card) -> str:
    return "/".join(str(part) for part in card.natural_key())


def _showing(showing: Showing) -> dict[str, Any]:
    review = showing.review_or_none
    return {
        "card": _card_key(showing.card),
        "card_title": showing.card.label,
        "shown_at": showing.shown_at.isoformat(),
        "answer": showing.answer,
        "layers_opened": [opening.layer for opening in showing.openings.all()],
        "rating": (
            {
                "value": review.rating,
                "label": review.get_rating_display(),
                "reviewed_at": review.reviewed_at.isoformat(),
            }
            if review
            else None
        ),
    }


def _schedule(state: ScheduleState) -> dict[str, Any]:
    """What a card's and a template's schedules both hold."""
    return {
        "due": state.due.isoformat(),
        "last_rating": state.last_rating,
        "last_rating_label": state.get_last_rating_display(),
        "last_reviewed_at": state.last_reviewed_at.isoformat(),
        "reviews": state.review_count,
        "fsrs": state.fsrs_card,
    }


def _card_schedule(state: CardState) -> dict[str, Any]:
    return {"card": _card_key(state.card), "card_title": state.card.label, **_schedule(state)}


def _practice_schedule(state: PracticeState) -> dict[str, Any]:
    return {"template": state.template.slug, "template_title": state.template.title, **_schedule(state)}


def _practice_attempt(attempt: PracticeAttempt) -> dict[str, Any]:
    return {
        "template": attempt.template.slug,
        "template_title": attempt.template.title,
        "seed": attempt.seed,
        "typed": attempt.typed,
        "value": attempt.value,
        "expected": attempt.expected,
        "ratio": attempt.ratio,
        "verdict": attempt.verdict,
        "seconds": attempt.seconds,
        "proposed_rating": {"value": attempt.proposed_rating, "label": attempt.get_proposed_rating_display()},
        "rating": {"value": attempt.rating, "label": attempt.get_rating_display()},
        "tries": attempt.tries,
        "hints_used": attempt.hints_used,
        "shown_solution": attempt.shown_solution,
        "is_review": attempt.is_review,
        "repeats_a_problem": attempt.repeats_a_problem,
        "mistake": attempt.mistake,
        "first_try": {
            "verdict": attempt.first_verdict,
            "mistake": attempt.first_mistake,
            "ratio": attempt.first_ratio,
            "hints": attempt.first_hints,
        },
        "answered_at": attempt.answered_at.isoformat(),
    }


def _practice_set(practice_set: PracticeSet) -> dict[str, Any]:
    """A practice set's draws in order; how each went is its practice attempt (same template and seed)."""
    return {
        "number": practice_set.number,
        "created_at": practice_set.created_at.isoformat(),
        "problems": [
            {"position": item.position, "template": item.template.slug, "seed": item.seed}
            for item in practice_set.items.all()
        ],
    }

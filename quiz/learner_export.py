"""Everything recorded about one learner, as plain JSON-ready data (/progress/export.json):
their showings with the ratings given, their schedules, their practice attempts and their runs."""

from __future__ import annotations

from typing import Any

from felab_sim.models import Run
from lessons.models import Card

from . import clock
from .learners import Learner
from .models import CardState, LearnerProfile, PracticeAttempt, PracticeState, ScheduleState, Showing


def export_data(learner: Learner) -> dict[str, Any]:
    """The learner's own rows, nobody else's, oldest first (schedules soonest due first)."""
    showings = (
        Showing.objects.for_learner(learner)
        .select_related("card__lesson__course", "review")
        .prefetch_related("openings")
        .order_by("shown_at", "id")
    )
    states = CardState.objects.for_learner(learner).select_related("card__lesson__course").order_by("due")
    attempts = (
        PracticeAttempt.objects.for_learner(learner).select_related("template").order_by("answered_at", "id")
    )
    practice_states = PracticeState.objects.for_learner(learner).select_related("template").order_by("due")
    user = learner.user
    # A run is an account's (started_by): an anonymous visitor cannot start one.
    runs = (
        Run.objects.filter(started_by=user).prefetch_related("levels", "orders").order_by("queued_at", "pk")
        if user is not None
        else Run.objects.none()
    )
    return {
        "learner": {
            "account": user.get_username() if user is not None else None,
            "shares_name_with_instructors": user is not None and LearnerProfile.of(user).share_name,
        },
        "exported_at": clock.now().isoformat(),
        "showings": [_showing(showing) for showing in showings],
        "schedule": [_card_schedule(state) for state in states],
        "practice_attempts": [_practice_attempt(attempt) for attempt in attempts],
        "practice_schedule": [_practice_schedule(state) for state in practice_states],
        "runs": [run.as_export() for run in runs],
    }


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
        "mistake": attempt.mistake,
        "first_try": {
            "verdict": attempt.first_verdict,
            "mistake": attempt.first_mistake,
            "ratio": attempt.first_ratio,
            "hints": attempt.first_hints,
        },
        "answered_at": attempt.answered_at.isoformat(),
    }

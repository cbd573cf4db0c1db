"""A learner rates a card: the rating is recorded for the showing of its answer, changed while
the change window is open (quiz.models.CHANGE_WINDOW) and final after it, and the card is
rescheduled from the learner's reviews of it (CardState.rebuild)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from . import clock
from .learner_rows import LearnerRead
from .models import CHANGE_WINDOW, CardState, Rating, Review, Showing


class Outcome(enum.Enum):
    SAVED = "saved"
    CHANGED = "changed"
    FINAL = "final"


@dataclass(frozen=True)
class Rated:
    review: Review
    outcome: Outcome
    state: CardState | None


def rate_showing(showing: Showing, rating: Rating) -> Rated:
    """Record a rating for a showing, or change it within the window; then reschedule the card.

    The showing comes with its review (Showing.for_rating), so a rating that changes nothing
    (the same button again, or one past the window) writes nothing: 1 query where a write
    costs 9 (bench/bench_http.py's rate POST sends the same rating over and over).
    """
    now = clock.now()
    loaded = showing.review_or_none
    if loaded is not None:
        if now - loaded.reviewed_at >= CHANGE_WINDOW:  # reviewed_at never changes
            return Rated(loaded, Outcome.FINAL, None)
        if loaded.rating == rating:
            states = _CARD_STATE.run(showing, card=showing.card_id)
            return Rated(loaded, Outcome.CHANGED, states[0] if states else None)
    with transaction.atomic():
        review = None
        if loaded is None:
            try:
                with transaction.atomic():  # a savepoint: another request may have rated it first
                    review = Review.objects.create(
                        showing=showing,
                        card_id=showing.card_id,
                        rating=rating,
                        reviewed_at=now,
                        **showing.owner_fields(),
                    )
                outcome = Outcome.SAVED
            except IntegrityError:
                review = None
        if review is None:
            review = Review.objects.select_for_update().get(showing=showing)
            if now - review.reviewed_at >= CHANGE_WINDOW:
                return Rated(review, Outcome.FINAL, None)
            outcome = Outcome.CHANGED
            if review.rating != rating:
                review.rating = rating
                review.save(update_fields=["rating"])
        state = CardState.rebuild(showing, showing.card_id)
    return Rated(review, outcome, state)


_CARD_STATE = LearnerRead(
    lambda owner, card: CardState.objects.of_showing(Showing(card_id=card, **owner.owner_fields())),
)

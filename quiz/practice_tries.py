"""A learner's tries at one drawn practice problem, each rated and scheduled.

A draw takes up to MAX_TRIES answers (quiz.models.PracticeAttempt keeps them as one row, its
first try apart) until one is right or the learner presses Show me; the rating those tries
propose feeds FSRS (PracticeState.rebuild) when the template was new or due at the first try,
and the learner may give their own rating instead within the change window (not after Show me).
The answer itself is checked by felab_sim.engine.problems.answers.

A submit is recorded once: the page says how many tries it had seen, and a submit made from a
page older than the attempt's last try (a double click, a resent form) gets the recorded result
instead of counting again. Two identical submits at once meet at the database: the second's
insert breaks the one-attempt-per-draw constraint, or its update finds the tries changed, and it
reads back the first's row.
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction

from felab_sim.engine.problems import answers

from . import clock, scheduling
from .learner_rows import Owner
from .models import PracticeAttempt, PracticeState, Rating, Verdict

# What a later try changes on its attempt.
_TRY_FIELDS = ("typed", "value", "expected", "ratio", "verdict", "mistake", "seconds", "tries", "hints_used",
               "answered_at", "proposed_rating", "rating")  # fmt: skip


def record_try(
    learner: Owner, template_id: int, seed: int, typed: str, value: float, expected: float,
    checked: answers.Checked, seconds: float | None, *, mistake: str = "", hints: int = 0,
    tries_seen: int | None = None,
) -> tuple[PracticeAttempt, bool]:  # fmt: skip
    """One try at this draw, rated and scheduled: the first creates the attempt, a later one
    (while the draw is open: not right, under MAX_TRIES, no Show me) updates it. Returns the
    attempt and whether this answer is its last try: False when the draw was finished before it
    and it is not counted. `tries_seen` is how many tries the page it came from showed (None:
    unknown); a submit from before the last try is that try again, or not counted."""
    typed = typed[:80]
    mine = PracticeAttempt.objects.for_learner(learner)
    earlier = mine.filter(template_id=template_id, seed=seed).first()
    if earlier is not None and tries_seen is not None and earlier.tries > tries_seen:
        return earlier, earlier.typed == typed
    if earlier is not None and earlier.finished:
        return earlier, False
    latest = mine.exclude(pk=earlier.pk if earlier else None).latest_for(template_id)
    previous_right = latest is not None and latest.verdict == Verdict.RIGHT
    now = clock.now()
    with transaction.atomic():
        if earlier is None:
            attempt = PracticeAttempt(
                template_id=template_id, seed=seed, tries=0, first_verdict=checked.verdict,
                first_mistake=mistake, first_hints=hints, first_ratio=checked.ratio,
                is_review=_is_due(learner, template_id, now),
                repeats_a_problem=mine.filter(template_id=template_id, expected=expected).exists(),
                **learner.owner_fields(),
            )  # fmt: skip
        else:
            attempt = earlier
        attempt.typed, attempt.value, attempt.expected = typed, value, expected
        attempt.ratio, attempt.verdict, attempt.mistake = checked.ratio, checked.verdict, mistake
        attempt.seconds, attempt.tries = seconds, attempt.tries + 1
        attempt.hints_used = max(attempt.hints_used, hints)
        attempt.answered_at = now
        attempt.proposed_rating = attempt.rating = proposed_rating(attempt, previous_right)
        if not _saved_first(attempt, earlier):
            winner = mine.get(template_id=template_id, seed=seed)
            return winner, winner.typed == typed
        PracticeState.rebuild(learner, template_id)
    return attempt, True


def _saved_first(attempt: PracticeAttempt, earlier: PracticeAttempt | None) -> bool:
    """Save the attempt unless another request wrote this draw since it was read (False)."""
    if earlier is None:
        try:
            with transaction.atomic():
                attempt.save(force_insert=True)
        except IntegrityError:
            return False
        return True
    # Only the row as it was read: of two tries sent at once, one is counted.
    seen = PracticeAttempt.objects.filter(pk=attempt.pk, tries=attempt.tries - 1, shown_solution=False)
    return seen.update(**{name: getattr(attempt, name) for name in _TRY_FIELDS}) == 1


def _is_due(learner: Owner, template_id: int, now: datetime) -> bool:
    """New to the learner or due now: an attempt begun then is a review FSRS counts."""
    state = PracticeState.objects.for_learner(learner).filter(template_id=template_id).only("due").first()
    return state is None or scheduling.is_due(state.due, now)


def show_solution(
    learner: Owner, template_id: int, seed: int, expected: float, hints: int
) -> PracticeAttempt:
    """ "Show me": the steps revealed, the draw finished and rated Missed it for good."""
    mine = PracticeAttempt.objects.for_learner(learner)
    attempt = mine.filter(template_id=template_id, seed=seed).first()
    if attempt is not None and attempt.finished:
        return attempt
    now = clock.now()
    with transaction.atomic():
        earlier = attempt
        if attempt is None:
            attempt = PracticeAttempt(
                template_id=template_id, seed=seed, tries=0, typed="", value=0.0, expected=expected,
                ratio=0.0, verdict=Verdict.OFF, first_hints=hints,
                is_review=_is_due(learner, template_id, now),
                repeats_a_problem=mine.filter(template_id=template_id, expected=expected).exists(),
                **learner.owner_fields(),
            )  # fmt: skip
        attempt.hints_used = max(attempt.hints_used, hints)
        attempt.answered_at = now
        attempt.proposed_rating = attempt.rating = Rating.MISSED_IT
        if earlier is None:
            attempt.shown_solution = True
            if not _saved_first(attempt, None):
                return mine.get(template_id=template_id, seed=seed)
        else:
            shown = mine.filter(pk=attempt.pk, shown_solution=False).update(
                shown_solution=True, hints_used=attempt.hints_used, answered_at=now,
                proposed_rating=Rating.MISSED_IT, rating=Rating.MISSED_IT,
            )  # fmt: skip
            if not shown:
                return mine.get(pk=attempt.pk)
            attempt.shown_solution = True
        PracticeState.rebuild(learner, template_id)
    return attempt


def proposed_rating(attempt: PracticeAttempt, previous_right: bool) -> int:
    """The rating its tries propose: Show me → Missed it; right at the first try without hints
    as answers.proposed_rating says (Got it, Easy when quick after a right one); right after a
    hint or another try no better than Hard; close Hard; off Missed it."""
    if attempt.shown_solution:
        return Rating.MISSED_IT
    rating = answers.proposed_rating(attempt.verdict, previous_right, attempt.seconds)
    if attempt.tries > 1 or attempt.hints_used:
        rating = min(rating, Rating.HARD)
    return rating


def change_rating(attempt: PracticeAttempt, rating: Rating) -> bool:
    """The student's own rating instead of the proposed one, within the window and not after
    Show me (PracticeAttempt.open_for_rating); False otherwise."""
    if not attempt.open_for_rating(clock.now()):
        return False
    with transaction.atomic():
        # Only while the row is still unshown: a Show me that landed after this attempt was read
        # fixes the rating, and this change must not write over it.
        if not PracticeAttempt.objects.filter(pk=attempt.pk, shown_solution=False).update(rating=rating):
            attempt.refresh_from_db()
            return False
        attempt.rating = rating
        PracticeState.rebuild(attempt, attempt.template_id)
    return True

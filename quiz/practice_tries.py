"""A learner's tries at one drawn practice problem, each rated and scheduled.

A draw takes up to MAX_TRIES answers (quiz.models.PracticeAttempt keeps them as one row, its
first try apart) until one is right or the learner presses Show me; the rating those tries
propose feeds FSRS (PracticeState.rebuild), and the learner may give their own rating instead
within the change window. The answer itself is checked by felab_sim.engine.answers.
"""

from __future__ import annotations

from django.db import transaction

from felab_sim.engine import answers

from . import clock
from .learner_rows import Owner
from .models import PracticeAttempt, PracticeState, Rating, Verdict


def record_try(
    learner: Owner, template_id: int, seed: int, typed: str, value: float, expected: float,
    checked: answers.Checked, seconds: float | None, *, mistake: str = "", hints: int = 0,
) -> tuple[PracticeAttempt, bool]:  # fmt: skip
    """One try at this draw, rated and scheduled: the first creates the attempt, a later one
    (while the draw is open: not right, under MAX_TRIES, no Show me) updates it; (the attempt,
    False) when the draw is finished and this answer is not counted."""
    mine = PracticeAttempt.objects.for_learner(learner)
    earlier = mine.filter(template_id=template_id, seed=seed).first()
    if earlier is not None and earlier.finished:
        return earlier, False
    latest = mine.exclude(pk=earlier.pk if earlier else None).latest_for(template_id)
    previous_right = latest is not None and latest.verdict == Verdict.RIGHT
    with transaction.atomic():
        if earlier is None:
            attempt = PracticeAttempt(
                template_id=template_id, seed=seed, tries=0, first_verdict=checked.verdict,
                first_mistake=mistake, first_hints=hints, first_ratio=checked.ratio,
                **learner.owner_fields(),
            )  # fmt: skip
        else:
            attempt = earlier
        attempt.typed, attempt.value, attempt.expected = typed[:80], value, expected
        attempt.ratio, attempt.verdict, attempt.mistake = checked.ratio, checked.verdict, mistake
        attempt.seconds, attempt.tries = seconds, attempt.tries + 1
        attempt.hints_used = max(attempt.hints_used, hints)
        attempt.answered_at = clock.now()
        attempt.proposed_rating = attempt.rating = proposed_rating(attempt, previous_right)
        attempt.save()
        PracticeState.rebuild(learner, template_id)
    return attempt, True


def show_solution(
    learner: Owner, template_id: int, seed: int, expected: float, hints: int
) -> PracticeAttempt:
    """ "Show me": the steps revealed, the draw finished and rated Missed it."""
    mine = PracticeAttempt.objects.for_learner(learner)
    attempt = mine.filter(template_id=template_id, seed=seed).first()
    if attempt is not None and attempt.finished:
        return attempt
    with transaction.atomic():
        if attempt is None:
            attempt = PracticeAttempt(
                template_id=template_id, seed=seed, tries=0, typed="", value=0.0, expected=expected,
                ratio=0.0, verdict=Verdict.OFF, first_hints=hints, **learner.owner_fields(),
            )  # fmt: skip
        attempt.shown_solution = True
        attempt.hints_used = max(attempt.hints_used, hints)
        attempt.answered_at = clock.now()
        attempt.proposed_rating = attempt.rating = Rating.MISSED_IT
        attempt.save()
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
    """The student's own rating instead of the proposed one, within the window; False after."""
    if not attempt.open_for_rating(clock.now()):
        return False
    with transaction.atomic():
        if attempt.rating != rating:
            attempt.rating = rating
            attempt.save(update_fields=["rating"])
        PracticeState.rebuild(attempt, attempt.template_id)
    return True

"""Mixed practice sets (/practice/set/): about SET_SIZE problems drawn by the server across the
lessons a learner has started, interleaved, weighted to what FSRS has due and to the weakest
mastery, never two of one template in a row; stored in order (quiz.models.PracticeSet), and
summarised per lesson at the end.

A set holds draws, not answers: each item is a template and a seed, answered on the practice
page's own rules (quiz.practice_views, quiz.practice_tries), so its PracticeAttempt, one per
learner and draw, is how the item went. A reload, the back button, a second tab or a resent form
therefore find the same set and count nothing twice.
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, models, transaction
from django.urls import reverse

from felab_sim.engine.problems.drill_specs import DrillError
from felab_sim.engine.problems.mistakes import offered
from lessons.models import Lesson, PracticeTemplate

from . import practice_stats, scheduling
from .learner_rows import Owner
from .models import PracticeAttempt, PracticeSet, PracticeSetItem, PracticeState, Showing, Verdict

SET_SIZE = 10
# A template new to the learner or due is weighted this many times one that is not: FSRS counts
# an answer to it as a review (practice_tries._is_due).
DUE_WEIGHT = 3.0
# Weakest mastery first: a lesson not yet practised or only attempted weighs most. One weight
# for each of practice_stats.MASTERY_WORDS' levels (a test holds the two equal).
MASTERY_WEIGHT = {"": 3.0, "attempted": 3.0, "familiar": 2.0, "proficient": 1.5, "mastered": 1.0}
# Interleaving: after a problem of one lesson, another lesson's problems weigh this many times
# more than the same lesson's (a soft rule, so the weights above still decide among lessons).
OTHER_LESSON_FACTOR = 5.0
# Seeds are drawn from 1 to this; a seed the learner answered for that template is drawn again,
# at most SEED_TRIES times (a draw already answered would count nothing).
SEED_RANGE = 1_000_000
SEED_TRIES = 20


@dataclass(frozen=True)
class Candidate:
    """A template the set may draw, with its lesson and its weight."""

    template_id: int
    lesson_id: int
    weight: float


def draw_order(candidates: Sequence[Candidate], rng: random.Random, size: int = SET_SIZE) -> list[Candidate]:
    """``size`` picks from ``candidates`` by weight, never the same template twice in a row.

    Each pick divides a template's weight by one more than the times it was picked already (so a
    set spreads over its templates) and, after a problem of one lesson, weighs the other lessons'
    OTHER_LESSON_FACTOR times more (interleaved). Fewer than two templates cannot make a set
    without a repeat in a row: the order is then the one template once, or nothing.
    Work: size × len(candidates) weights."""
    if len(candidates) < 2:
        return list(candidates[:1])
    picks: list[Candidate] = []
    times: Counter[int] = Counter()
    for _ in range(size):
        previous = picks[-1] if picks else None
        options = [c for c in candidates if previous is None or c.template_id != previous.template_id]
        weights = []
        for option in options:
            weight = option.weight / (1 + times[option.template_id])
            if previous is not None and option.lesson_id != previous.lesson_id:
                weight *= OTHER_LESSON_FACTOR
            weights.append(weight)
        pick = rng.choices(options, weights=weights)[0]
        picks.append(pick)
        times[pick.template_id] += 1
    return picks


def started_lessons(learner: Owner) -> set[int]:
    """Lessons the learner has started: a card's answer shown (and maybe rated) or a problem
    practised there (two queries; none for a visitor who never recorded anything)."""
    if not learner.known:
        return set()
    cards = (
        Showing.objects.for_learner(learner).values_list("card__lesson_id", flat=True).distinct().order_by()
    )
    practised = (
        PracticeAttempt.objects.for_learner(learner)
        .values_list("template__lesson_id", flat=True)
        .distinct()
        .order_by()
    )
    return set(cards) | set(practised)


def candidates(learner: Owner, now: datetime) -> list[Candidate]:
    """The published templates of the learner's started lessons, each weighted: DUE_WEIGHT when
    FSRS has it new or due, times its lesson's MASTERY_WEIGHT."""
    lessons = started_lessons(learner)
    if not lessons:
        return []
    records = practice_stats.learner_records(learner, now)
    templates = (
        PracticeTemplate.objects.published()
        .filter(lesson_id__in=lessons)
        .order_by("lesson__order", "lesson__number", "order", "slug")
        .values_list("pk", "lesson_id")
    )
    found = []
    for template_id, lesson_id in templates:
        record = records.of(template_id)
        due = DUE_WEIGHT if record.due or record.attempts == 0 else 1.0
        mastery = MASTERY_WEIGHT[records.mastery_of(lesson_id).level]
        found.append(Candidate(template_id, lesson_id, due * mastery))
    return found


def _seeds(learner: Owner, picks: Sequence[Candidate], rng: random.Random) -> list[int]:
    """A seed for each pick, none the learner answered for that template nor repeated in the set."""
    used = set(
        PracticeAttempt.objects.for_learner(learner)
        .filter(template_id__in={pick.template_id for pick in picks})
        .values_list("template_id", "seed")
    )
    seeds = []
    for pick in picks:
        for _ in range(SEED_TRIES):
            seed = rng.randint(1, SEED_RANGE)
            if (pick.template_id, seed) not in used:
                break
        used.add((pick.template_id, seed))
        seeds.append(seed)
    return seeds


def new_rng() -> random.Random:
    """A fresh, unpredictable draw for each new set (tests fix it)."""
    return random.Random(secrets.randbits(64))


def latest(learner: Owner) -> PracticeSet | None:
    return PracticeSet.objects.for_learner(learner).latest_first().first()


def next_number(learner: Owner) -> int:
    found = latest(learner)
    return found.number + 1 if found is not None else 1


def start(learner: Owner, number: int, now: datetime, rng: random.Random | None = None) -> PracticeSet | None:
    """The learner's set ``number``, drawn and stored now unless it is already: the start form
    names the number it makes, so a resent form or a second tab gets the set the first made.
    None when there is nothing to draw (fewer than two templates in the started lessons)."""
    mine = PracticeSet.objects.for_learner(learner)
    if (found := mine.filter(number=number).first()) is not None:
        return found
    rng = rng or new_rng()
    picks = draw_order(candidates(learner, now), rng)
    if len(picks) < 2:
        return None
    seeds = _seeds(learner, picks, rng)
    try:
        with transaction.atomic():
            practice_set = PracticeSet.objects.create(number=number, created_at=now, **learner.owner_fields())
            PracticeSetItem.objects.bulk_create(
                PracticeSetItem(
                    practice_set=practice_set, position=index, template_id=pick.template_id, seed=seed
                )
                for index, (pick, seed) in enumerate(zip(picks, seeds, strict=True), start=1)
            )
    except IntegrityError:
        # Two starts of one number at once: the first stored is the set.
        return mine.get(number=number)
    return practice_set


@dataclass(frozen=True)
class SetItem:
    """One item of a set with the learner's attempt at its draw (None before any answer)."""

    item: PracticeSetItem
    attempt: PracticeAttempt | None

    @property
    def position(self) -> int:
        return self.item.position

    @property
    def template(self) -> PracticeTemplate:
        return self.item.template

    @property
    def withdrawn(self) -> bool:
        """Made a draft since the set was drawn: nobody's to practise, so the set goes on without it."""
        return self.item.template.is_draft

    @property
    def done(self) -> bool:
        return self.withdrawn or (self.attempt is not None and self.attempt.finished)

    @property
    def left_out(self) -> bool:
        """Withdrawn before the learner finished it: no result of theirs, so no count holds it."""
        return self.withdrawn and (self.attempt is None or not self.attempt.finished)

    @property
    def status(self) -> str:
        """How the problem went, in a few words."""
        attempt = self.attempt
        if self.withdrawn and attempt is None:
            return "withdrawn from practice"
        if attempt is None:
            return "not answered yet"
        tries = f"{attempt.tries} tr{'y' if attempt.tries == 1 else 'ies'}"
        if attempt.shown_solution:
            return "shown" if attempt.tries == 0 else f"shown after {tries}"
        if attempt.verdict == Verdict.RIGHT:
            if self.right_first_time:
                return "right first time"
            at = "at the first try" if attempt.tries == 1 else f"at try {attempt.tries}"
            return f"right {at}" + (", after a hint" if attempt.hints_used else "")
        if attempt.finished:
            return f"not right after {attempt.tries} tries"
        return f"open: {attempt.tries_left} tr{'y' if attempt.tries_left == 1 else 'ies'} left"

    @property
    def started(self) -> bool:
        return self.attempt is not None

    @property
    def right_first_time(self) -> bool:
        """Right at the first try without a hint: the set's own measure (mastery's full score)."""
        attempt = self.attempt
        return (
            attempt is not None and attempt.tries > 0 and attempt.right_first_time and not attempt.first_hints
        )


@dataclass(frozen=True)
class SetProgress:
    """A set with each item's attempt, in order."""

    practice_set: PracticeSet
    items: list[SetItem]

    @property
    def size(self) -> int:
        return len(self.items)

    @property
    def done_count(self) -> int:
        return sum(item.done for item in self.items)

    @property
    def finished(self) -> bool:
        return all(item.done for item in self.items)

    @property
    def next_open(self) -> SetItem | None:
        """The first item not finished: where a resumed set goes on."""
        return next((item for item in self.items if not item.done), None)

    def item_at(self, position: int) -> SetItem | None:
        return next((item for item in self.items if item.position == position), None)

    @property
    def right_first_time(self) -> int:
        return sum(item.right_first_time for item in self.items if not item.left_out)

    @property
    def counted(self) -> int:
        """The problems the set's result counts: all but those withdrawn before they were finished."""
        return sum(not item.left_out for item in self.items)

    @property
    def withdrawn(self) -> int:
        return self.size - self.counted


def progress_of(learner: Owner, practice_set: PracticeSet) -> SetProgress:
    """The set's items and the learner's attempts at their draws (two queries)."""
    items = list(practice_set.items.select_related("template__lesson__course").order_by("position"))
    attempts = {
        (attempt.template_id, attempt.seed): attempt
        for attempt in PracticeAttempt.objects.for_learner(learner).filter(
            template_id__in={item.template_id for item in items}, seed__in={item.seed for item in items}
        )
    }
    return SetProgress(
        practice_set, [SetItem(item, attempts.get((item.template_id, item.seed))) for item in items]
    )


@dataclass
class LessonSummary:
    """What one lesson's problems in a set came to."""

    lesson: Lesson
    problems: int = 0
    right_first_time: int = 0
    withdrawn: int = 0  # withdrawn from practice before the learner finished them: not in problems
    mistakes: Counter[str] = field(default_factory=Counter)  # each named mistake's sentence, times made
    due_now: int = 0  # the lesson's templates FSRS has due now
    next_due: datetime | None = None  # the soonest one due later, when none is due now
    next_due_text: str = ""  # "in 3 days"

    @property
    def mistakes_made(self) -> list[tuple[str, int]]:
        return sorted(self.mistakes.items(), key=lambda item: (-item[1], item[0]))


def _mistake_sentences(item: SetItem) -> list[str]:
    """The named mistakes the item's tries made (the first try's and the last's), each in its
    draw's numbers: the draw is solved again to word them as the page did."""
    attempt = item.attempt
    if attempt is None:
        return []
    slugs = [slug for slug in dict.fromkeys((attempt.first_mistake, attempt.mistake)) if slug]
    if not slugs:
        return []
    try:
        says = {named.slug: named.says for named in offered(item.template.problem(item.item.seed))}
    except DrillError:
        return slugs
    return [says.get(slug, slug) for slug in slugs]


def summary(learner: Owner, progress: SetProgress, now: datetime) -> list[LessonSummary]:
    """Per lesson, in course order: the set's problems there, right first time, the named mistakes
    made and what FSRS has due now in the lesson (or when its next problem is due). Bounded by
    the set: at most SET_SIZE draws solved again, for the mistakes' sentences."""
    by_lesson: dict[int, LessonSummary] = {}
    for item in progress.items:
        lesson = item.template.lesson
        row = by_lesson.setdefault(lesson.pk, LessonSummary(lesson))
        if item.left_out:
            row.withdrawn += 1
            continue
        row.problems += 1
        row.right_first_time += item.right_first_time
        row.mistakes.update(_mistake_sentences(item))
    states = (
        PracticeState.objects.for_learner(learner)
        .of_published_templates()
        .filter(template__lesson_id__in=by_lesson)
        .values_list("template__lesson_id", "due")
    )
    for lesson_id, due in states:
        row = by_lesson[lesson_id]
        if due <= now:
            row.due_now += 1
        elif row.next_due is None or due < row.next_due:
            row.next_due = due
    for row in by_lesson.values():
        if row.next_due is not None:
            row.next_due_text = scheduling.humanize_interval(row.next_due - now)
    return sorted(by_lesson.values(), key=lambda row: (row.lesson.order, row.lesson.number))


def recent_sets(learner: Owner, limit: int = 5) -> models.QuerySet[PracticeSet]:
    return PracticeSet.objects.for_learner(learner).latest_first()[:limit]


def item_url(number: int, position: int) -> str:
    return reverse("practice_set_item", args=[number, position])


def set_url(number: int) -> str:
    return reverse("practice_set_overview", args=[number])


def whole_number(text: str | None) -> int | None:
    """A form's or address's small whole number, or None."""
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 9 else None


def next_in_set(learner: Owner, place: str | None) -> dict[str, Any] | None:
    """The learner's set place "N/P" a rating form carries, as the confirmation page's "Next in
    set" link (None when it names no set of theirs)."""
    number, _, position = (place or "").partition("/")
    number_, position_ = whole_number(number), whole_number(position)
    if number_ is None or position_ is None:
        return None
    found = PracticeSet.objects.for_learner(learner).filter(number=number_).first()
    if found is None:
        return None
    size = found.items.count()
    if not 1 <= position_ <= size:
        return None
    is_last = position_ == size
    return {
        "number": number_,
        "position": position_,
        "size": size,
        "overview_url": set_url(number_),
        "next_url": set_url(number_) if is_last else item_url(number_, position_ + 1),
        "is_last": is_last,
    }

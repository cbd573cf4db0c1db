"""What /progress/ and /instructor/ show of practice problems: attempts, share right, calibration
(how many times off a learner's estimates are, per lesson, as they go) and the class's wrong
answers grouped by how far off they were."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from statistics import median

from django.db import models
from django.db.models.functions import Coalesce, RowNumber

from felab_sim.engine.core.numbers import format_number
from felab_sim.engine.problems.answers import ratio_group
from lessons.models import Lesson, PracticeTemplate

from . import clock, scheduling
from .learner_rows import Owner
from .models import ClassMistake, PracticeAttempt, PracticeState, Verdict

# Calibration is the median error of each run of this many attempts, oldest first.
CALIBRATION_WINDOW = 5


def times_off(ratio: float) -> str:
    """An error ratio as the page prints it: "1.1×", "∞" for an answer of zero."""
    return "∞" if math.isinf(ratio) else f"{format_number(ratio)}×"


# Mastery reads a lesson's last this many problems, across its templates: an attempt at a problem
# the learner answered before (another seed drawing the same answer) is not counted again.
MASTERY_WINDOW = 8
# (level, problems at least, score at least), highest first; the score is the mean over the window
# of 1 for a first try right without a hint, 0.5 for right after a hint or another try, 0 else.
MASTERY_LEVELS = (
    ("mastered", 6, 0.9),
    ("proficient", 4, 0.7),
    ("familiar", 2, 0.4),
    ("attempted", 1, 0.0),
)
# Mastered also takes, within the window, first tries right (score 1) on this many UTC dates, so
# one sitting cannot reach it, and on this many of the lesson's templates, so one kind of problem
# cannot (a lesson with fewer published templates asks for all of them: one, for a lesson of one).
MASTERED_DAYS = 2
MASTERED_TEMPLATES = 2
# And it lasts while FSRS expects the learner to recall every template of the lesson they have a
# schedule for at least this well, read at the time of asking: below it, Mastered reads
# Proficient until a review brings recall back. 0.85 sits under the scheduler's desired retention
# (0.9, when a template falls due), so a review a little late keeps it and a long absence does not.
MASTERED_RECALL = 0.85
MASTERY_WORDS = {
    "mastered": "Mastered",
    "proficient": "Proficient",
    "familiar": "Familiar",
    "attempted": "Attempted",
    "": "Not started",
}


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _percent_at_most(value: float) -> int:
    """A share as a whole percent rounded down, so "at least N%" and "under 85%" stay true
    (0.8496 is 84%, not 85%)."""
    return math.floor(round(value * 100, 6))


def attempt_score(attempt: PracticeAttempt) -> float:
    """What one attempt says of the learner's hold on the idea (first try right counts most)."""
    if attempt.shown_solution or attempt.verdict != Verdict.RIGHT:
        return 0.0
    return 1.0 if attempt.right_first_time and not attempt.hints_used else 0.5


@dataclass(frozen=True)
class Mastery:
    """A lesson's mastery level and why: the three things Mastered takes, how many hold and
    what is missing, and, once reached, whether FSRS's recall keeps it."""

    level: str = ""
    reason: str = ""

    @property
    def words(self) -> str:
        return MASTERY_WORDS[self.level]


NOT_STARTED = Mastery()


def mastery_of(
    attempts: list[PracticeAttempt],
    templates_in_lesson: int = MASTERED_TEMPLATES,
    recall: float | None = None,
    tried: int | None = None,
) -> Mastery:
    """A lesson's mastery from its attempts, oldest first (the last MASTERY_WINDOW problems
    decide, each counted once), the number of templates the lesson publishes, the lowest recall
    FSRS predicts now for the lesson's templates the learner has a schedule for, and how many of
    the lesson's templates the learner ever tried (``tried``; None: those of ``attempts``).

    The reason says which facts come from the window ("in your last 8 problems") and counts the
    templates not yet tried from every attempt, so it never tells a learner to try what they have."""
    if tried is None:
        tried = len({attempt.template_id for attempt in attempts})
    recent = [attempt for attempt in attempts if not attempt.repeats_a_problem][-MASTERY_WINDOW:]
    if not recent:
        return NOT_STARTED
    scores = [attempt_score(attempt) for attempt in recent]
    score = sum(scores) / len(recent)
    alone = [attempt for attempt, value in zip(recent, scores, strict=True) if value == 1.0]
    days = len({attempt.answered_at.date() for attempt in alone})
    templates = len({attempt.template_id for attempt in alone})
    templates_needed = max(1, min(MASTERED_TEMPLATES, templates_in_lesson))
    level = next(
        name
        for name, at_least, score_at_least in MASTERY_LEVELS
        if len(recent) >= at_least and score >= score_at_least
    )
    _, problems_needed, score_needed = MASTERY_LEVELS[0]
    met = {
        "score": len(recent) >= problems_needed and score >= score_needed,
        "days": days >= MASTERED_DAYS,
        "templates": templates >= templates_needed,
    }
    parts = [
        f"in your last {_count(len(recent), 'problem', 'problems')}, an average score of {score:.2f}"
        + (
            ""
            if met["score"]
            else f" (an average of {score_needed} over at least {problems_needed} problems needed)"
        ),
        f"right at a first try without a hint on {_count(days, 'day', 'days')}"
        + ("" if met["days"] else f" ({MASTERED_DAYS} needed)")
        if days
        else "not yet right at a first try without a hint",
    ]
    untried = max(0, templates_in_lesson - tried)
    if templates_in_lesson == 0:
        parts.append("none of its problem types is published now")
    elif templates_in_lesson == 1:
        parts.append(
            "its one problem type right" if met["templates"] else "its one problem type not yet right"
        )
    elif met["templates"]:
        parts.append(f"right on {_count(templates, 'problem type', 'problem types')}")
    elif untried > 0:
        parts.append(f"{_count(untried, 'problem type', 'problem types')} not yet tried")
    else:
        parts.append(
            f"right on {_count(templates, 'problem type', 'problem types')} ({templates_needed} needed)"
        )
    reason = f"{sum(met.values())} of 3: " + "; ".join(parts)
    if level == "mastered" and not all(met.values()):
        level = "proficient"
    if level == "mastered" and recall is not None and recall < MASTERED_RECALL:
        shown = min(_percent_at_most(recall), _percent_at_most(MASTERED_RECALL) - 1)
        return Mastery(
            "proficient",
            f"Mastered, but recall is down to {shown}% on one of its problem types "
            f"(under {_percent_at_most(MASTERED_RECALL)}%): practise what is due",
        )
    if level == "mastered" and recall is not None:
        reason += f"; recall at least {_percent_at_most(recall)}% on each problem type"
    return Mastery(level, reason)


def mastery_level(
    attempts: list[PracticeAttempt], templates_in_lesson: int = 1, recall: float | None = None
) -> str:
    """mastery_of's level alone."""
    return mastery_of(attempts, templates_in_lesson, recall).level


def lowest_recall(states: Iterable[tuple[int, dict]], at: datetime) -> dict[int, float]:
    """Per lesson id, the lowest recall FSRS predicts at `at` over the given (lesson id, FSRS
    card) schedules."""
    lowest: dict[int, float] = {}
    for lesson_id, card in states:
        recall = scheduling.retrievability(card, at)
        if recall is not None:
            lowest[lesson_id] = min(recall, lowest.get(lesson_id, 1.0))
    return lowest


@dataclass(frozen=True)
class LessonPractice:
    """One learner's practice in one lesson."""

    lesson_number: int
    lesson_title: str
    attempts: int
    right: int
    calibration: list[float]  # median error ratio per window of answered attempts, oldest first
    mastery: Mastery = NOT_STARTED
    answered: int = 0  # attempts with an answer (a Show me before any has none)

    @property
    def mastery_text(self) -> str:
        return self.mastery.words

    @property
    def right_percent(self) -> int:
        return round(100 * self.right / self.attempts) if self.attempts else 0

    @property
    def calibration_text(self) -> list[str]:
        return [times_off(ratio) for ratio in self.calibration]

    @property
    def windows(self) -> list[CalibrationWindow]:
        """Each run of attempts the calibration is a median of, oldest first."""
        return [
            CalibrationWindow(
                first=index * CALIBRATION_WINDOW + 1,
                last=min((index + 1) * CALIBRATION_WINDOW, self.answered or self.attempts),
                median=ratio,
            )
            for index, ratio in enumerate(self.calibration)
        ]


@dataclass(frozen=True)
class CalibrationWindow:
    """Attempts `first` to `last` in a lesson (counting from 1) and their median error ratio."""

    first: int
    last: int
    median: float

    @property
    def attempts_text(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}–{self.last}"

    @property
    def median_text(self) -> str:
        return times_off(self.median)


def practice_of(
    learner: Owner,
    templates: Mapping[int, PracticeTemplate],
    states: Iterable[PracticeState] = (),
    now: datetime | None = None,
) -> list[LessonPractice]:
    """Per lesson the learner practised, in course order: attempts, share right first time,
    calibration and mastery. ``templates`` holds every template by id with its lesson (the view
    keeps them per content version), so the learner's rows are read without a join.

    Read as summaries, so a learner's whole history is not loaded on every visit to /progress/:
    the counts by one grouped query (a row a template), mastery from the last MASTERY_WINDOW
    attempts of each lesson (_mastery_by_lesson), and calibration from one number per answered
    attempt (its first try's ratio), as many as the page's calibration table has medians of.
    Only the counts for a learner who never answered. ``states`` are the learner's practice
    schedules (quiz.selectors.Schedules reads them for the page): mastery's recall at ``now``.
    """
    if not learner.known:
        return []
    mine = PracticeAttempt.objects.for_learner(learner)
    counts: dict[int, list[int]] = {}  # lesson id: [attempts, right first time]
    tried_templates = set()
    for template_id, attempts, right in (
        mine.values_list("template_id")
        .annotate(attempts=models.Count("id"), right=models.Count("id", filter=RIGHT_FIRST_TIME))
        .order_by()
    ):
        tried_templates.add(template_id)
        lesson_counts = counts.setdefault(templates[template_id].lesson_id, [0, 0])
        lesson_counts[0] += attempts
        lesson_counts[1] += right
    if not counts:
        return []
    # First tries only: what the learner estimated before a verdict, hint-free or not (a Show me
    # before any answer has none: tries 0), as PracticeAttempt.first_error_ratio reads them.
    first_ratios = (
        mine.filter(tries__gt=0)
        .values_list("template_id", Coalesce("first_ratio", "ratio"))
        .order_by("answered_at", "id")
    )
    errors: dict[int, list[float]] = {}
    for template_id, ratio in first_ratios:
        errors.setdefault(templates[template_id].lesson_id, []).append(
            math.inf if ratio <= 0 else max(ratio, 1 / ratio)
        )
    published: Counter[int] = Counter(
        template.lesson_id
        for template in templates.values()
        if template.published and template.lesson.published
    )
    recall = lowest_recall(
        (
            (templates[state.template_id].lesson_id, state.fsrs_card)
            for state in states
            if state.template_id in templates
        ),
        now or clock.now(),
    )
    tried: Counter[int] = Counter(
        templates[template_id].lesson_id
        for template_id in tried_templates
        if templates[template_id].published and templates[template_id].lesson.published
    )
    mastery = _mastery_by_lesson(learner, published, recall, tried)
    lessons = {template.lesson_id: template.lesson for template in templates.values()}
    practice = []
    for lesson in sorted(
        (lessons[lesson_id] for lesson_id in counts), key=lambda lesson: (lesson.order, lesson.number)
    ):
        attempts, right = counts[lesson.id]
        answered = errors.get(lesson.id, [])
        windows = [answered[i : i + CALIBRATION_WINDOW] for i in range(0, len(answered), CALIBRATION_WINDOW)]
        practice.append(
            LessonPractice(
                lesson_number=lesson.number,
                lesson_title=lesson.title,
                attempts=attempts,
                right=right,
                calibration=[median(window) for window in windows],
                mastery=mastery.get(lesson.id, NOT_STARTED),
                answered=len(answered),
            )
        )
    return practice


def templates_by_id() -> dict[int, PracticeTemplate]:
    """Every practice template, drafts too (a learner's attempts outlive publishing), with its
    lesson: for practice_of, kept per content version by the view."""
    return {template.pk: template for template in PracticeTemplate.objects.select_related("lesson")}


@dataclass(frozen=True)
class TemplateOverview:
    """The class's work on one template, for the instructor."""

    slug: str
    title: str
    url: str
    lesson_number: int
    attempts: int
    right: int
    groups: list[tuple[str, int]]  # by ratio ("right", "2–10× high"…), most common first
    first: dict[str, int] = field(default_factory=dict)  # first tries: right, mistake, close, off, shown
    final: dict[str, int] = field(default_factory=dict)  # in the end: alone, helped, not right
    mistakes: list[tuple[str, str, int]] = field(default_factory=list)  # (slug, says, count), most first

    @property
    def right_percent(self) -> int:
        return round(100 * self.right / self.attempts) if self.attempts else 0


_FIRST = {
    "right": models.Q(first_verdict=Verdict.RIGHT, tries__gt=0),
    "mistake": ~models.Q(first_mistake="") & models.Q(tries__gt=0),
    "close": models.Q(first_verdict=Verdict.CLOSE, first_mistake="", tries__gt=0),
    "off": models.Q(first_verdict=Verdict.OFF, first_mistake="", tries__gt=0),
    "shown": models.Q(tries=0),
}
_FINAL = {
    "alone": models.Q(verdict=Verdict.RIGHT, tries=1, hints_used=0, shown_solution=False),
    "helped": models.Q(verdict=Verdict.RIGHT, shown_solution=False)
    & (models.Q(tries__gt=1) | models.Q(hints_used__gt=0)),
    "missed": ~models.Q(verdict=Verdict.RIGHT) | models.Q(shown_solution=True),
}


def class_answers(attempts: models.QuerySet) -> tuple[dict[int, dict[str, int]], dict[int, Counter[str]]]:
    """Per template: how first tries went and how attempts ended (one grouped query), and the
    named mistakes made, at the first try or the last (two)."""
    counts = {
        row.pop("template_id"): row
        for row in attempts.values("template_id")
        .annotate(
            **{f"n_first_{k}": models.Count("id", filter=q) for k, q in _FIRST.items()},
            **{f"n_final_{k}": models.Count("id", filter=q) for k, q in _FINAL.items()},
        )
        .order_by()
    }
    mistakes: dict[int, Counter[str]] = {}
    firsts = attempts.exclude(first_mistake="").values_list("template_id", "first_mistake")
    lasts = attempts.exclude(mistake="").exclude(mistake=models.F("first_mistake"))
    for rows in (
        firsts.annotate(n=models.Count("id")).order_by(),
        lasts.values_list("template_id", "mistake").annotate(n=models.Count("id")).order_by(),
    ):
        for template_id, slug, n in rows:
            mistakes.setdefault(template_id, Counter())[slug] += n
    return counts, mistakes


def template_overviews(
    templates: Iterable,
    attempts: Iterable[tuple[int, float, str]],
    class_rows: models.QuerySet | None = None,
    named_by_class: Mapping[int, list[ClassMistake]] | None = None,
) -> list[TemplateOverview]:
    """Per template, in the order given: attempts, share right, answers grouped by ratio, and
    (from ``class_rows``, the attempts) first tries, how they ended and the named mistakes."""
    groups: dict[int, Counter[str]] = {}
    for template_id, ratio, verdict in attempts:
        groups.setdefault(template_id, Counter())[ratio_group(ratio, verdict)] += 1
    counts, mistakes = class_answers(class_rows) if class_rows is not None else ({}, {})
    named_by_class = named_by_class or {}
    overviews = []
    for template in templates:
        found = groups.get(template.pk, Counter())
        row = counts.get(template.pk, {})
        says = {m.get("slug"): m.get("says", "") for m in template.mistakes if isinstance(m, dict)}
        says.update({m.slug: m.says for m in named_by_class.get(template.pk, ())})
        overviews.append(
            TemplateOverview(
                slug=template.slug,
                title=template.title,
                url=template.get_absolute_url(),
                lesson_number=template.lesson.number,
                attempts=sum(found.values()),
                right=found["right"],
                groups=sorted(found.items(), key=lambda item: (-item[1], item[0])),
                first={k: row.get(f"n_first_{k}", 0) for k in _FIRST},
                final={k: row.get(f"n_final_{k}", 0) for k in _FINAL},
                mistakes=[
                    (slug, says.get(slug, ""), n)
                    for slug, n in sorted(
                        mistakes.get(template.pk, Counter()).items(), key=lambda i: (-i[1], i[0])
                    )
                ],
            )
        )
    return overviews


@dataclass(frozen=True)
class LessonTemplates:
    """A lesson's published templates as /practice/ lists them: the same for every visitor."""

    lesson: Lesson
    templates: list[PracticeTemplate]


def published_by_lesson() -> list[LessonTemplates]:
    """Every published template by lesson, in course order (one query): kept per content version
    by the view, so it holds course content only."""
    templates = (
        PracticeTemplate.objects.published()
        .select_related("lesson__course")
        .order_by("lesson__course__order", "lesson__course__title", "lesson__order", "lesson__number",
                  "order", "slug")
    )  # fmt: skip
    by_lesson: dict[int, LessonTemplates] = {}
    for template in templates:
        by_lesson.setdefault(template.lesson_id, LessonTemplates(template.lesson, [])).templates.append(
            template
        )
    return list(by_lesson.values())


@dataclass(frozen=True)
class TemplateRecord:
    """One learner's record on one template: attempts, how many right at the first try (as
    /progress/ counts them), whether FSRS has it due."""

    attempts: int = 0
    right: int = 0
    due: bool = False

    @property
    def right_percent(self) -> int:
        return round(100 * self.right / self.attempts) if self.attempts else 0


@dataclass(frozen=True)
class LearnerRecords:
    """What /practice/ shows of one learner, by template id: built per request."""

    by_template: dict[int, TemplateRecord]
    mastery: dict[int, Mastery] = field(default_factory=dict)  # by lesson id

    def of(self, template_id: int) -> TemplateRecord:
        return self.by_template.get(template_id, NOT_TRIED)

    def mastery_of(self, lesson_id: int) -> Mastery:
        return self.mastery.get(lesson_id, NOT_STARTED)


NOT_TRIED = TemplateRecord()


# PracticeAttempt.right_first_time, in SQL.
RIGHT_FIRST_TIME = models.Q(first_verdict=Verdict.RIGHT) | models.Q(first_verdict="", verdict=Verdict.RIGHT)


def learner_records(learner: Owner, now: datetime) -> LearnerRecords:
    """The learner's attempts, share right and what is due now, per template, and mastery per
    lesson (three queries for a known learner, none for a visitor who never answered)."""
    counts = {
        row["template_id"]: row
        for row in PracticeAttempt.objects.for_learner(learner)
        .values("template_id", "template__lesson_id", "template__published")
        .annotate(n=models.Count("id"), right=models.Count("id", filter=RIGHT_FIRST_TIME))
        .order_by()
    }
    # Per lesson, its published templates the learner ever tried (mastery's "not yet tried").
    tried = Counter(row["template__lesson_id"] for row in counts.values() if row["template__published"])
    # Every schedule of a published template: what is due, and mastery's recall.
    states = list(
        PracticeState.objects.for_learner(learner)
        .of_published_templates()
        .values_list("template_id", "template__lesson_id", "due", "fsrs_card")
        .order_by()
    )
    due = {template_id for template_id, _, when, _ in states if scheduling.is_due(when, now)}
    by_template = {
        template_id: TemplateRecord(row["n"], row["right"], template_id in due)
        for template_id, row in counts.items()
    }
    for template_id in due - by_template.keys():  # scheduled without an attempt kept (none today)
        by_template[template_id] = TemplateRecord(due=True)
    recall = lowest_recall(((lesson_id, card) for _, lesson_id, _, card in states), now)
    return LearnerRecords(by_template, _mastery_by_lesson(learner, None, recall, tried) if counts else {})


def _mastery_by_lesson(
    learner: Owner, published: Mapping[int, int] | None, recall: Mapping[int, float], tried: Mapping[int, int]
) -> dict[int, Mastery]:
    """Each lesson's mastery from the learner's last MASTERY_WINDOW problems in it (one query,
    at most that many rows a lesson however long the learner has practised), the number of
    templates each lesson publishes (``published``; None: counted in the same query), the
    lowest recall FSRS predicts for each (lowest_recall) and how many of its published templates
    the learner ever tried (``tried``, from the caller's counts of every attempt)."""
    recent = models.Window(
        RowNumber(), partition_by=[models.F("template__lesson_id")], order_by=[models.F("answered_at").desc(),
                                                                              models.F("id").desc()]
    )  # fmt: skip
    rows = (
        PracticeAttempt.objects.for_learner(learner)
        .filter(repeats_a_problem=False)
        .annotate(lesson_id=models.F("template__lesson_id"), recency=recent)
        .filter(recency__lte=MASTERY_WINDOW)
        .only("template_id", "verdict", "first_verdict", "hints_used", "shown_solution", "answered_at",
              "repeats_a_problem")
        .order_by("answered_at", "id")
    )  # fmt: skip
    if published is None:
        rows = rows.annotate(
            published_templates=models.Subquery(
                PracticeTemplate.objects.published()
                .filter(lesson_id=models.OuterRef("template__lesson_id"))
                .values("lesson_id")
                .annotate(n=models.Count("id"))
                .values("n")
            )
        )
    by_lesson: dict[int, list[PracticeAttempt]] = {}
    counts: dict[int, int] = dict(published or {})
    for attempt in rows:
        by_lesson.setdefault(attempt.lesson_id, []).append(attempt)
        if published is None:
            counts[attempt.lesson_id] = attempt.published_templates or 0
    return {
        lesson_id: mastery_of(found, counts.get(lesson_id, 0), recall.get(lesson_id), tried.get(lesson_id, 0))
        for lesson_id, found in by_lesson.items()
    }

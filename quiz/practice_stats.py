"""What /progress/ and /instructor/ show of practice problems: attempts, share right, calibration
(how many times off a learner's estimates are, per lesson, as they go) and the class's wrong
answers grouped by how far off they were."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from statistics import median

from django.db import models
from django.db.models.functions import RowNumber

from felab_sim.engine.answers import ratio_group
from felab_sim.engine.numbers import format_number
from lessons.models import Lesson, PracticeTemplate

from .learner_rows import LearnerQuerySet, LearnerRead, Owner
from .models import PracticeAttempt, PracticeState, Verdict

# Calibration is the median error of each run of this many attempts, oldest first.
CALIBRATION_WINDOW = 5


def times_off(ratio: float) -> str:
    """An error ratio as the page prints it: "1.1×", "∞" for an answer of zero."""
    return "∞" if math.isinf(ratio) else f"{format_number(ratio)}×"


# Mastery reads a lesson's last this many attempts, across its templates.
MASTERY_WINDOW = 8
# (level, attempts at least, score at least), highest first; the score is the mean over the window
# of 1 for a first try right without a hint, 0.5 for right after a hint or another try, 0 else.
MASTERY_LEVELS = (("mastered", 6, 0.9), ("proficient", 4, 0.7), ("familiar", 2, 0.4), ("attempted", 1, 0.0))
MASTERY_WORDS = {
    "mastered": "Mastered",
    "proficient": "Proficient",
    "familiar": "Familiar",
    "attempted": "Attempted",
    "": "Not started",
}


def attempt_score(attempt: PracticeAttempt) -> float:
    """What one attempt says of the learner's hold on the idea (first try right counts most)."""
    if attempt.shown_solution or attempt.verdict != Verdict.RIGHT:
        return 0.0
    return 1.0 if attempt.right_first_time and not attempt.hints_used else 0.5


def mastery_level(attempts: list[PracticeAttempt]) -> str:
    """A lesson's mastery from its attempts, oldest first: the last MASTERY_WINDOW decide."""
    recent = attempts[-MASTERY_WINDOW:]
    if not recent:
        return ""
    score = sum(attempt_score(a) for a in recent) / len(recent)
    for level, at_least, score_at_least in MASTERY_LEVELS:
        if len(recent) >= at_least and score >= score_at_least:
            return level
    return "attempted"


@dataclass(frozen=True)
class LessonPractice:
    """One learner's practice in one lesson."""

    lesson_number: int
    lesson_title: str
    attempts: int
    right: int
    calibration: list[float]  # median error ratio per window of answered attempts, oldest first
    mastery: str = ""  # a MASTERY_LEVELS level
    answered: int = 0  # attempts with an answer (a Show me before any has none)

    @property
    def mastery_text(self) -> str:
        return MASTERY_WORDS[self.mastery]

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


def _in_course_order(attempts: LearnerQuerySet) -> LearnerQuerySet:
    return attempts.select_related("template__lesson").order_by(
        "template__lesson__order", "template__lesson__number", "answered_at", "id"
    )


_LEARNER_ATTEMPTS = LearnerRead(lambda owner: _in_course_order(PracticeAttempt.objects.for_learner(owner)))


def learner_practice(attempts: LearnerQuerySet) -> list[LessonPractice]:
    """Per lesson, in course order: these attempts, share right and calibration."""
    return _by_lesson(_in_course_order(attempts))


def practice_of(learner: Owner) -> list[LessonPractice]:
    """learner_practice of the learner's own attempts."""
    return _by_lesson(_LEARNER_ATTEMPTS.run(learner))


def _by_lesson(rows: Iterable[PracticeAttempt]) -> list[LessonPractice]:
    by_lesson: dict[int, list[PracticeAttempt]] = {}
    for attempt in rows:
        by_lesson.setdefault(attempt.template.lesson_id, []).append(attempt)
    return [_lesson_practice(found) for found in by_lesson.values()]


def _lesson_practice(attempts: list[PracticeAttempt]) -> LessonPractice:
    lesson = attempts[0].template.lesson
    # First tries only: what the learner estimated before a verdict, hint-free or not.
    errors = [ratio for attempt in attempts if (ratio := attempt.first_error_ratio) is not None]
    windows = [errors[i : i + CALIBRATION_WINDOW] for i in range(0, len(errors), CALIBRATION_WINDOW)]
    return LessonPractice(
        lesson_number=lesson.number,
        lesson_title=lesson.title,
        attempts=len(attempts),
        right=sum(attempt.right_first_time for attempt in attempts),
        calibration=[median(window) for window in windows],
        mastery=mastery_level(sorted(attempts, key=lambda a: (a.answered_at, a.pk))),
        answered=len(errors),
    )


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
    templates: Iterable, attempts: Iterable[tuple[int, float, str]], class_rows: models.QuerySet | None = None
) -> list[TemplateOverview]:
    """Per template, in the order given: attempts, share right, answers grouped by ratio, and
    (from ``class_rows``, the attempts) first tries, how they ended and the named mistakes."""
    groups: dict[int, Counter[str]] = {}
    for template_id, ratio, verdict in attempts:
        groups.setdefault(template_id, Counter())[ratio_group(ratio, verdict)] += 1
    counts, mistakes = class_answers(class_rows) if class_rows is not None else ({}, {})
    overviews = []
    for template in templates:
        found = groups.get(template.pk, Counter())
        row = counts.get(template.pk, {})
        says = {m.get("slug"): m.get("says", "") for m in template.mistakes if isinstance(m, dict)}
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
    """One learner's record on one template: attempts, how many right, whether FSRS has it due."""

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
    mastery: dict[int, str] = field(default_factory=dict)  # by lesson id: a MASTERY_LEVELS level

    def of(self, template_id: int) -> TemplateRecord:
        return self.by_template.get(template_id, NOT_TRIED)

    def mastery_of(self, lesson_id: int) -> str:
        return MASTERY_WORDS[self.mastery.get(lesson_id, "")]


NOT_TRIED = TemplateRecord()


def learner_records(learner: Owner, now: datetime) -> LearnerRecords:
    """The learner's attempts, share right and what is due now, per template (two queries for a
    known learner, none for a visitor who never answered)."""
    counts = {
        row["template_id"]: row
        for row in PracticeAttempt.objects.for_learner(learner)
        .values("template_id")
        .annotate(n=models.Count("id"), right=models.Count("id", filter=models.Q(verdict=Verdict.RIGHT)))
        .order_by()
    }
    due = set(PracticeState.objects.for_learner(learner).due(now).values_list("template_id", flat=True))
    by_template = {
        template_id: TemplateRecord(row["n"], row["right"], template_id in due)
        for template_id, row in counts.items()
    }
    for template_id in due - by_template.keys():  # scheduled without an attempt kept (none today)
        by_template[template_id] = TemplateRecord(due=True)
    return LearnerRecords(by_template, _mastery_by_lesson(learner) if counts else {})


def _mastery_by_lesson(learner: Owner) -> dict[int, str]:
    """Each lesson's mastery from the learner's last MASTERY_WINDOW attempts in it (one query,
    at most that many rows a lesson however long the learner has practised)."""
    recent = models.Window(
        RowNumber(), partition_by=[models.F("template__lesson_id")], order_by=[models.F("answered_at").desc(),
                                                                              models.F("id").desc()]
    )  # fmt: skip
    rows = (
        PracticeAttempt.objects.for_learner(learner)
        .annotate(lesson_id=models.F("template__lesson_id"), recency=recent)
        .filter(recency__lte=MASTERY_WINDOW)
        .only("verdict", "first_verdict", "hints_used", "shown_solution", "answered_at")
        .order_by("answered_at", "id")
    )
    by_lesson: dict[int, list[PracticeAttempt]] = {}
    for attempt in rows:
        by_lesson.setdefault(attempt.lesson_id, []).append(attempt)
    return {lesson_id: mastery_level(found) for lesson_id, found in by_lesson.items()}

"""What /progress/ and /instructor/ show of practice problems: attempts, share right, calibration
(how many times off a learner's estimates are, per lesson, as they go) and the class's wrong
answers grouped by how far off they were."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from statistics import median

from django.db import models

from felab_sim.engine.answers import ratio_group
from felab_sim.engine.numbers import format_number
from lessons.models import Lesson, PracticeTemplate

from .models import LearnerQuerySet, LearnerRead, Owner, PracticeAttempt, PracticeState, Verdict

# Calibration is the median error of each run of this many attempts, oldest first.
CALIBRATION_WINDOW = 5


def times_off(ratio: float) -> str:
    """An error ratio as the page prints it: "1.1×", "∞" for an answer of zero."""
    return "∞" if math.isinf(ratio) else f"{format_number(ratio)}×"


@dataclass(frozen=True)
class LessonPractice:
    """One learner's practice in one lesson."""

    lesson_number: int
    lesson_title: str
    attempts: int
    right: int
    calibration: list[float]  # median error ratio per window of attempts, oldest first

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
                last=min((index + 1) * CALIBRATION_WINDOW, self.attempts),
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
    errors = [attempt.error_ratio for attempt in attempts]
    windows = [errors[i : i + CALIBRATION_WINDOW] for i in range(0, len(errors), CALIBRATION_WINDOW)]
    return LessonPractice(
        lesson_number=lesson.number,
        lesson_title=lesson.title,
        attempts=len(attempts),
        right=sum(attempt.verdict == Verdict.RIGHT for attempt in attempts),
        calibration=[median(window) for window in windows],
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

    @property
    def right_percent(self) -> int:
        return round(100 * self.right / self.attempts) if self.attempts else 0


def template_overviews(
    templates: Iterable, attempts: Iterable[tuple[int, float, str]]
) -> list[TemplateOverview]:
    """Per template, in the order given: attempts, share right, answers grouped by ratio."""
    groups: dict[int, Counter[str]] = {}
    for template_id, ratio, verdict in attempts:
        groups.setdefault(template_id, Counter())[ratio_group(ratio, verdict)] += 1
    overviews = []
    for template in templates:
        counts = groups.get(template.pk, Counter())
        overviews.append(
            TemplateOverview(
                slug=template.slug,
                title=template.title,
                url=template.get_absolute_url(),
                lesson_number=template.lesson.number,
                attempts=sum(counts.values()),
                right=counts["right"],
                groups=sorted(counts.items(), key=lambda item: (-item[1], item[0])),
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

    def of(self, template_id: int) -> TemplateRecord:
        return self.by_template.get(template_id, NOT_TRIED)


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
    return LearnerRecords(by_template)

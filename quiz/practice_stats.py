"""What /progress/ and /instructor/ show of practice problems: attempts, share right, calibration
(how many times off a learner's estimates are, per lesson, as they go) and the class's wrong
answers grouped by how far off they were."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median

from felab_sim.engine.answers import ratio_group
from felab_sim.engine.numbers import format_number

from .models import LearnerQuerySet, PracticeAttempt, Verdict

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


def learner_practice(attempts: LearnerQuerySet) -> list[LessonPractice]:
    """Per lesson, in course order: the learner's attempts, share right and calibration."""
    rows = attempts.select_related("template__lesson").order_by(
        "template__lesson__order", "template__lesson__number", "answered_at", "id"
    )
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

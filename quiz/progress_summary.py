"""/progress/'s summary and due forecast, counted from the lessons' progress and the learner's
schedules already read (quiz.selectors): no query."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from . import scheduling
from .models import CardState, Rating
from .selectors import LessonProgress, Schedules

# The due forecast looks this many days ahead, as Anki's "future due" chart does by default
# for a month; two weeks fits a phone's width with a bar per day.
FORECAST_DAYS = 14
SOON = timedelta(days=7)


@dataclass(frozen=True)
class ProgressSummary:
    """What /progress/ opens with: cards rated, how it went, what is due now and soon, and a
    forecast of reviews per day. Cards rated come from the lessons' progress; what is due, from
    the learner's Schedules, cards and practice problems, as /review/ lists them. No query."""

    total: int
    rated: int
    good: int
    scheduled: int  # cards and practice problems with a schedule
    due_now: int
    due_soon: int  # due within SOON, not now
    forecast: tuple[int, ...]  # [0]: due now; [d]: due between d - 1 and d days from now
    later: int  # due after FORECAST_DAYS

    @classmethod
    def of(cls, lessons: Iterable[LessonProgress], schedules: Schedules, now: datetime) -> ProgressSummary:
        # One pass over the lessons, with no per-lesson property or generator: this runs for every
        # lesson on every visit to /progress/.
        total = 0
        states: list[CardState] = []
        for lesson in lessons:
            total += len(lesson.lesson.listed_cards)
            states.extend(lesson.states.values())
        forecast = [0] * (FORECAST_DAYS + 1)
        later = due_soon = 0
        dues = schedules.dues
        for due in dues:
            if scheduling.is_due(due, now):
                forecast[0] += 1
                continue
            ahead = due - now
            due_soon += ahead <= SOON
            day = -(-ahead // timedelta(days=1))  # ceiling: 1 h ahead is day 1
            if day <= FORECAST_DAYS:
                forecast[day] += 1
            else:
                later += 1
        return cls(
            total=total,
            rated=len(states),
            good=sum(1 for state in states if state.last_rating >= Rating.GOT_IT),
            scheduled=len(dues),
            due_now=forecast[0],
            due_soon=due_soon,
            forecast=tuple(forecast),
            later=later,
        )

    @property
    def good_percent(self) -> int | None:
        return round(100 * self.good / self.rated) if self.rated else None

    @property
    def forecast_note(self) -> str:
        """The forecast chart's numbers as a line of text ("2 now · 1 within a day · 3 in 5 days ·
        0 later."), for readers without the chart."""
        parts = []
        for day, count in enumerate(self.forecast):
            if count:
                parts.append(
                    f"{count} now"
                    if day == 0
                    else f"{count} within a day"
                    if day == 1
                    else f"{count} in {day} days"
                )
        return " · ".join([*parts, f"{self.later} later."])

    @property
    def forecast_days(self) -> list[tuple[str, int]]:
        """(label, count due) per forecast bar: "now", then "1" to FORECAST_DAYS days ahead."""
        return [("now" if day == 0 else str(day), count) for day, count in enumerate(self.forecast)]

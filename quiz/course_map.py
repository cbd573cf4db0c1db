"""The home page's course map: every lesson in order with one learner's progress, and where to go next.

Built from rows already loaded (the course's prefetched lessons and cards, the learner's
schedules and the cards they have opened), so it adds no query however long the course is.
Lessons are named by ``id`` rather than ``pk`` here, as in quiz.selectors.LessonProgress: ``pk`` is a
property that looks the primary key's field up, and these run for every lesson on every visit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lessons.models import Card, Course, Lesson

from . import scheduling
from .lesson_runs import untouched_runs
from .selectors import LessonProgress


@dataclass(frozen=True)
class LessonOnMap:
    progress: LessonProgress
    seen: int
    is_next: bool

    @property
    def lesson(self) -> Lesson:
        return self.progress.lesson

    @property
    def untouched(self) -> bool:
        """Nothing opened or rated here yet: the lesson looks the same to every such learner."""
        return not self.seen and not self.progress.rated


@dataclass(frozen=True)
class NextCard:
    """Where the learner should go next: the longest-overdue review, else the first card not yet rated."""

    card: Card
    due: bool

    @property
    def url(self) -> str:
        # A due card opens in the review flow, so its next step is the next due card.
        return self.card.page_url + ("?review=1" if self.due else "")


@dataclass(frozen=True)
class LessonRun:
    """Lessons next to each other on the map that are all untouched, or one touched lesson."""

    stops: tuple[LessonOnMap, ...]

    @property
    def untouched(self) -> bool:
        return self.stops[0].untouched


@dataclass(frozen=True)
class CourseMap:
    course: Course
    lessons: list[LessonOnMap]
    next_card: NextCard | None

    @property
    def due_count(self) -> int:
        return sum(stop.progress.due_count for stop in self.lessons)

    @property
    def runs(self) -> list[LessonRun]:
        return [LessonRun(run) for run in untouched_runs(self.lessons, lambda stop: stop.untouched)]

    @property
    def started(self) -> bool:
        return any(stop.seen or stop.progress.rated for stop in self.lessons)

    @classmethod
    def build(
        cls, course: Course, progress: dict[int, LessonProgress], seen_card_ids: Iterable[int]
    ) -> CourseMap:
        seen_ids = set(seen_card_ids)
        lessons = [progress[lesson.id] for lesson in course.listed_lessons]
        next_card = _next_card(lessons)
        next_lesson_id = next_card.card.lesson_id if next_card else None
        return cls(
            course=course,
            lessons=[
                LessonOnMap(
                    progress=lesson_progress,
                    seen=len(seen_ids & lesson_progress.lesson.listed_card_ids) if seen_ids else 0,
                    is_next=lesson_progress.lesson.id == next_lesson_id,
                )
                for lesson_progress in lessons
            ],
            next_card=next_card,
        )


def _next_card(lessons: list[LessonProgress]) -> NextCard | None:
    # From the schedules alone: the map is built on every visit to home, over every card.
    due = [
        state.due
        for lesson in lessons
        for state in lesson.states.values()
        if scheduling.is_due(state.due, lesson.now)
    ]
    if due:
        # Reviews first, oldest first: they are what the schedule says is being forgotten. Of
        # cards due at the same moment, the first in the course.
        oldest = min(due)
        for lesson in lessons:
            for card in lesson.lesson.listed_cards if lesson.states else ():
                state = lesson.states.get(card.id)
                if state is not None and state.due == oldest:
                    return NextCard(card=card, due=True)
    for lesson in lessons:
        if lesson.rated < lesson.total:
            return NextCard(
                card=next(card for card in lesson.lesson.listed_cards if card.id not in lesson.states),
                due=False,
            )
    return None

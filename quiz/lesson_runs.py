"""Lessons in runs, for the pages that keep each run as one fragment (home's map, /progress/):
lessons the learner has not touched side by side, each touched one alone."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from .selectors import LessonProgress

T = TypeVar("T")


@dataclass(frozen=True)
class ProgressRun:
    """Lessons next to each other on /progress/ that the learner has rated nothing in, or one
    lesson they have: untouched lessons are shown side by side, as on home's map."""

    lessons: tuple[LessonProgress, ...]

    @classmethod
    def runs_of(cls, lessons: Iterable[LessonProgress]) -> list[ProgressRun]:
        return [cls(run) for run in untouched_runs(lessons, lambda progress: not progress.states)]


def untouched_runs(items: Iterable[T], untouched: Callable[[T], bool]) -> list[tuple[T, ...]]:
    """The items in order, in runs: each untouched item with the untouched ones next to it, each
    touched one alone (home's map and /progress/ keep each run as one fragment)."""
    runs: list[list[T]] = []
    last_untouched = False  # whether the run before this item is of untouched ones
    for item in items:
        this_untouched = untouched(item)  # asked once an item: pages ask it per lesson per request
        if this_untouched and last_untouched:
            runs[-1].append(item)
        else:
            runs.append([item])
        last_untouched = this_untouched
    return [tuple(run) for run in runs]

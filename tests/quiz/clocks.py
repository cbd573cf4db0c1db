"""A clock tests can move: quiz.clock.now reads it instead of the system time."""

from datetime import UTC, datetime, timedelta

import pytest

from quiz import clock

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class MovableClock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, start: datetime = START) -> None:
        self.current = start
        monkeypatch.setattr(clock, "now", self.now)

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> datetime:
        self.current += timedelta(**delta)
        return self.current

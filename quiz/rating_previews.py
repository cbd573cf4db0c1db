"""The four rating buttons' previews: what each rating means and when the card would come back.

Worked out from the learner's history of the card (quiz.scheduling), with no query: the card page
hands in the history quiz.selectors.CardStudy read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.utils.functional import cached_property

from . import scheduling
from .models import RATING_LABELS

# Month abbreviations as strftime's %b prints them in the C locale the server runs in; index 0 unused.
_MONTHS = ("", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Preview:
    """One rating button: what it means and when the card would come back."""

    value: int
    label: str
    due: datetime
    when: str

    @property
    def due_text(self) -> str:
        """The due time as the button's tooltip prints it ("3 Dec 2026, 09:15", UTC).

        It prints as ``f"{due.day} {due:%b %Y, %H:%M}"`` does (tests/quiz/test_rating_buttons.py),
        from the date's numbers: it runs for four buttons on every card page with its answer shown.
        """
        due = self._due_utc
        return f"{due.day} {_MONTHS[due.month]} {due.year}, {due.hour:02d}:{due.minute:02d}"

    @property
    def due_iso(self) -> str:
        """The due time for the button's data-due ("2026-12-03T09:15:00Z"), as ``%Y-%m-%dT%H:%M:%SZ``."""
        due = self._due_utc
        return (
            f"{due.year:04d}-{due.month:02d}-{due.day:02d}T{due.hour:02d}:{due.minute:02d}:{due.second:02d}Z"
        )

    @cached_property
    def _due_utc(self) -> datetime:
        # Both of a button's times print it: converted once.
        return self.due.astimezone(UTC)

    @classmethod
    def for_history(cls, card_id: int, history: list[tuple[int, datetime]], now: datetime) -> list[Preview]:
        if history:
            dues = scheduling.previews(scheduling.replay(card_id, history, start=history[0][1]), now)
        else:
            dues = scheduling.first_rating_previews(now)
        return [
            cls(value, label, dues[value], scheduling.humanize_interval(dues[value] - now))
            for value, label in RATING_LABELS.items()  # Rating.choices builds its list on each call
        ]

"""The time as the quiz sees it.

Everything that schedules, records or compares study times asks this module, so
tests can move time forward (monkeypatch `now`) instead of sleeping.
"""

from datetime import UTC, datetime

from django.utils import timezone


def now() -> datetime:
    """The current time, aware and in UTC (fsrs refuses any other zone)."""
    return timezone.now().astimezone(UTC)


def as_utc(moment: datetime) -> datetime:
    """A database datetime in the exact UTC tzinfo fsrs checks for."""
    return moment.astimezone(UTC)

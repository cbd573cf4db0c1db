"""Due, "now" and the countdowns agree on every page: one definition, tested at its boundary."""

from datetime import timedelta

import pytest

from quiz import scheduling
from quiz.models import CardState, Rating
from tests.quiz.clocks import START
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("left", "due", "text"),
    [
        (timedelta(seconds=-5), True, "now"),
        (timedelta(0), True, "now"),
        (timedelta(seconds=59, microseconds=999_999), True, "now"),
        (timedelta(minutes=1), False, "in 1 min"),
        (timedelta(minutes=1, seconds=1), False, "in 1 min"),
    ],
)
def test_a_card_reads_now_exactly_when_it_is_due(left, due, text):
    assert scheduling.is_due(START + left, START) is due
    assert scheduling.humanize_interval(left) == text


@pytest.mark.parametrize("seconds_later", [1, 30, 59])
def test_after_missed_it_review_progress_and_the_countdown_agree(client, seed_card, clock, seconds_later):
    show(client)
    ack = rate(client, Rating.MISSED_IT).content.decode()
    assert "comes back in 1 min" in ack  # FSRS brings a missed card back a minute later
    clock.advance(seconds=seconds_later)

    review = client.get("/review/").content.decode()
    assert "Nothing is due now" not in review
    assert "1 card due now" in review

    progress = client.get("/progress/").content.decode()
    assert "1 due for review" in progress and "<strong>due now</strong>" in progress


def test_a_minute_before_due_nothing_is_due_and_the_countdown_says_so(client, seed_card, clock):
    show(client)
    rate(client, Rating.GOT_IT)
    due = CardState.objects.get().due
    clock.current = due - timedelta(minutes=1)
    review = client.get("/review/").content.decode()
    assert "Nothing is due now" in review and "comes back in 1 min" in review
    progress = client.get("/progress/").content.decode()
    assert "0 due for review" in progress and "in 1 min" in progress
    clock.current = due - timedelta(seconds=59)
    assert "1 card due now" in client.get("/review/").content.decode()

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
        (timedelta(microseconds=1), False, "in 1 min"),
        (timedelta(seconds=29), False, "in 1 min"),
        (timedelta(seconds=59, microseconds=999_999), False, "in 1 min"),
        (timedelta(minutes=1), False, "in 1 min"),
    ],
)
def test_a_card_reads_now_exactly_when_it_is_due(left, due, text):
    assert scheduling.is_due(START + left, START) is due
    assert scheduling.humanize_interval(left) == text


@pytest.mark.parametrize("seconds_later", [0, 1, 30, 59])
def test_within_a_minute_of_missed_it_every_page_says_in_1_min(client, seed_card, clock, seconds_later):
    show(client)
    ack = rate(client, Rating.MISSED_IT).content.decode()
    assert "comes back in 1 min" in ack  # FSRS brings a missed card back a minute later, not "now"
    clock.advance(seconds=seconds_later)

    review = client.get("/review/").content.decode()
    assert "Nothing is due now" in review and "comes back in 1 min" in review

    progress = client.get("/progress/").content.decode()
    assert "0 due for review" in progress and "in 1 min" in progress and "due now" not in progress


def test_a_minute_after_missed_it_the_card_is_due_on_every_page(client, seed_card, clock):
    show(client)
    rate(client, Rating.MISSED_IT)
    clock.current = CardState.objects.get().due  # the boundary: due from this instant
    review = client.get("/review/").content.decode()
    assert "1 card due now" in review and "Nothing is due now" not in review
    progress = client.get("/progress/").content.decode()
    assert "1 due for review" in progress and "<strong>due now</strong>" in progress

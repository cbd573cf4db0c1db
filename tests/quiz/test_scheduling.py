"""The four previews are what fsrs says, and pressing a button schedules exactly its preview."""

import re
from datetime import UTC, datetime, timedelta

import fsrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quiz import scheduling
from quiz.models import CardState, Rating
from quiz.rating_previews import Preview
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def fsrs_dues(history: list[tuple[int, datetime]], at: datetime) -> dict[int, datetime]:
    """Straight from the fsrs package: replay, then review_card once per rating."""
    scheduler = fsrs.Scheduler(enable_fuzzing=False)
    card = fsrs.Card(card_id=7, due=history[0][1] if history else at)
    for rating, when in history:
        card, _ = scheduler.review_card(card, fsrs.Rating(rating), review_datetime=when)
    return {int(r): scheduler.review_card(card, r, review_datetime=at)[0].due for r in fsrs.Rating}


def test_previews_for_a_new_card_match_fsrs():
    previews = Preview.for_history(7, [], NOW)
    assert [p.value for p in previews] == [1, 2, 3, 4]
    assert [p.label for p in previews] == ["Missed it", "Hard", "Got it", "Easy"]
    assert {p.value: p.due for p in previews} == fsrs_dues([], NOW)
    # fsrs's default learning steps, as a student reads them.
    assert [p.when for p in previews][:3] == ["in 1 min", "in 6 min", "in 10 min"]
    assert re.fullmatch(r"in \d+ days?", previews[3].when)


@given(st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)))
def test_a_new_cards_previews_are_fsrs_whenever_it_is_first_rated(at):
    # The card page works a new card's four waits out once (scheduling.first_rating_previews).
    previews = Preview.for_history(7, [], at)
    assert {p.value: p.due for p in previews} == fsrs_dues([], at)


def test_previews_after_a_history_match_fsrs():
    history = [
        (Rating.GOT_IT, NOW),
        (Rating.GOT_IT, NOW + timedelta(minutes=11)),
        (Rating.HARD, NOW + timedelta(days=3)),
        (Rating.MISSED_IT, NOW + timedelta(days=9)),
    ]
    at = NOW + timedelta(days=9, minutes=20)
    previews = Preview.for_history(7, history, at)
    assert {p.value: p.due for p in previews} == fsrs_dues(history, at)
    assert len({p.due for p in previews}) == 4  # four different promises


@given(
    steps=st.lists(
        st.tuples(st.sampled_from([1, 2, 3, 4]), st.integers(min_value=0, max_value=60 * 24 * 40)),
        max_size=6,
    ),
    rating=st.sampled_from([1, 2, 3, 4]),
    wait=st.integers(min_value=0, max_value=60 * 24 * 90),
)
def test_pressing_a_button_schedules_its_preview(steps, rating, wait):
    history, when = [], NOW
    for value, minutes in steps:
        when += timedelta(minutes=minutes)
        history.append((value, when))
    at = when + timedelta(minutes=wait)
    previewed = {p.value: p.due for p in Preview.for_history(7, history, at)}
    after = scheduling.replay(7, [*history, (rating, at)], start=NOW)
    assert after.due == previewed[rating]


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(0), "now"),
        (timedelta(seconds=20), "in 1 min"),
        (timedelta(minutes=1), "in 1 min"),
        (timedelta(minutes=5, seconds=30), "in 6 min"),
        (timedelta(minutes=10), "in 10 min"),
        (timedelta(hours=1), "in 1 hour"),
        (timedelta(hours=5), "in 5 hours"),
        (timedelta(days=1), "in 1 day"),
        (timedelta(days=3), "in 3 days"),
        (timedelta(days=90), "in 3 months"),
        (timedelta(days=800), "in 2.2 years"),
    ],
)
def test_intervals_read_in_plain_words(delta, text):
    assert scheduling.humanize_interval(delta) == text


def button_texts(body: str) -> list[str]:
    """Each rating button's visible words, tags dropped."""
    buttons = re.findall(r'<button type="submit" name="rating".*?>(.*?)</button>', body, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", inner).split()) for inner in buttons]


@pytest.mark.django_db
def test_card_page_buttons_show_the_fsrs_previews(client, seed_card, clock):
    show(client, "memory")
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    expected = fsrs_dues([], clock.now())
    texts = button_texts(body)
    assert texts == [
        f"{label} {scheduling.humanize_interval(expected[value] - clock.now())}"
        for value, label in Rating.choices
    ]
    assert texts[2] == "Got it in 10 min"


@pytest.mark.django_db
def test_previews_follow_the_learners_own_history(client, other_student_client, seed_card, clock):
    show(client)
    rate(client, Rating.GOT_IT)
    clock.advance(minutes=15)
    show(client)
    mine = button_texts(client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode())
    show(other_student_client)
    theirs = button_texts(other_student_client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode())
    history = [(Rating.GOT_IT, clock.now() - timedelta(minutes=15))]
    expected = fsrs_dues(history, clock.now())
    assert mine[2] == f"Got it {scheduling.humanize_interval(expected[3] - clock.now())}"
    assert mine != theirs
    assert theirs[2] == "Got it in 10 min"


@pytest.mark.django_db
def test_rating_schedules_the_card_when_its_button_said(client, seed_card, clock):
    show(client)
    page = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    # What the Easy button's tooltip promised, to the minute.
    easy_due = re.search(r'value="4"[^>]*title="Comes back ([^"]+) UTC"', page)[1]
    rate(client, Rating.EASY)
    state = CardState.objects.get()
    assert Preview(4, "Easy", state.due, "").due_text == easy_due
    assert state.fsrs_card["state"] == fsrs.State.Review.value


@pytest.mark.django_db
def test_previews_hold_while_the_rating_may_still_change(client, seed_card, clock):
    show(client)
    before = button_texts(client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode())
    rate(client, Rating.EASY)
    clock.advance(seconds=10)
    # Still the same showing: the buttons offer the same choice, not one made after Easy.
    during = button_texts(client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode())
    assert [text.split(" in ")[0] for text in during] == [text.split(" in ")[0] for text in before]
    assert during[3] == before[3] and during[0] == before[0]
    clock.advance(minutes=1)
    after = button_texts(client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode())
    assert after[0] != before[0] or after[3] != before[3]

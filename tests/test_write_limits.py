"""Every POST that records study is limited per client address and per learner, with a 429
page that says when to try again; an IPv6 /64 is one address."""

import pytest
from django.test import Client

from quiz.models import PracticeAttempt, Rating, Showing
from serving.ratelimit import counted_address
from tests.conftest import SEED_CARD_URL
from tests.limits import SteppedClock

pytestmark = pytest.mark.django_db

SHOW_URL = SEED_CARD_URL + "show/"
PRACTICE_SLUG = "l05-kv-per-conversation"
PRACTICE_URL = f"/practice/{PRACTICE_SLUG}/"


@pytest.fixture
def limiter_clock(monkeypatch) -> SteppedClock:
    clock = SteppedClock()
    monkeypatch.setattr("serving.ratelimit.clock", clock)
    return clock


def limits(settings, *, per_address: int = 0, per_learner: int = 0) -> None:
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        "write": (per_address, 60),
        "learner-write": (per_learner, 60),
    }


def test_visitors_without_a_session_from_one_address_are_refused_past_its_limit(
    settings, seed_card, limiter_clock
):
    limits(settings, per_address=5, per_learner=40)
    statuses = [Client().post(SHOW_URL, {"answer": f"try {n}"}).status_code for n in range(8)]
    assert statuses == [302] * 5 + [429] * 3
    assert Showing.objects.count() == 5  # a refused request records nothing
    limiter_clock.advance(60)
    assert Client().post(SHOW_URL, {"answer": "later"}).status_code == 302


def test_the_429_is_a_page_that_says_when_to_try_again(settings, seed_card, limiter_clock):
    limits(settings, per_address=1)
    Client().post(SHOW_URL)
    limiter_clock.advance(20)
    refused = Client().post(SHOW_URL)
    assert (refused.status_code, refused["Retry-After"]) == (429, "40")
    assert refused["Content-Type"].startswith("text/html")
    body = refused.content.decode()
    assert (
        "Too many requests" in body
        and "Try again in 40 s" in body
        and "Nothing from this request was saved" in body
    )


def test_an_htmx_request_gets_the_429_in_words_the_page_shows_in_place(settings, seed_card):
    limits(settings, per_address=1)
    Client().post(SHOW_URL)
    refused = Client().post(SHOW_URL, headers={"HX-Request": "true"})
    assert refused.status_code == 429 and refused["Content-Type"].startswith("text/plain")
    assert refused.content.decode().startswith("Too many requests: at most 1 per 60 s for saving study.")


def test_one_learner_is_refused_past_theirs_while_others_at_the_address_go_on(settings, seed_card):
    limits(settings, per_address=100, per_learner=3)
    learner = Client()
    learner.post(SHOW_URL)  # the visitor becomes a learner, counted from their next write on
    statuses = [learner.post(SHOW_URL).status_code for _ in range(5)]
    assert statuses == [302] * 3 + [429] * 2
    assert Client().post(SHOW_URL).status_code == 302


def test_a_signed_in_learner_is_counted_across_their_sessions(settings, seed_card, student):
    limits(settings, per_address=100, per_learner=2)
    first, second = Client(), Client()
    first.force_login(student)
    second.force_login(student)
    assert [first.post(SHOW_URL).status_code, second.post(SHOW_URL).status_code] == [302, 302]
    assert second.post(SHOW_URL).status_code == 429


def _card_rate(client: Client) -> int:
    return client.post(SEED_CARD_URL + "rate/", {"rating": Rating.GOT_IT}).status_code


def _card_open(client: Client) -> int:
    return client.post(SEED_CARD_URL + "opened/", {"layer": "deeper"}).status_code


def _practice_answer(client: Client) -> int:
    return client.post(PRACTICE_URL, {"seed": 3, "answer": "1 GB"}).status_code


def _practice_hint(client: Client) -> int:
    return client.post(PRACTICE_URL, {"seed": 4, "action": "hint"}).status_code


def _practice_show(client: Client) -> int:
    return client.post(PRACTICE_URL, {"seed": 5, "action": "show"}).status_code


def _practice_rate(client: Client) -> int:
    attempt = PracticeAttempt.objects.order_by("pk").first()
    return client.post(PRACTICE_URL + "rate/", {"rating": 2, "attempt": attempt.pk}).status_code


def _sharing(client: Client) -> int:
    return client.post("/progress/sharing/", {"share_name": "on"}).status_code


WRITES = [_card_rate, _card_open, _practice_answer, _practice_hint, _practice_show, _practice_rate, _sharing]


@pytest.mark.parametrize("write", WRITES, ids=lambda write: write.__name__.lstrip("_"))
def test_every_write_a_learner_can_send_is_limited(settings, seed_card, student, write, limiter_clock):
    client = Client()
    client.force_login(student)
    client.post(SHOW_URL)  # a showing to rate
    client.post(PRACTICE_URL, {"seed": 9, "answer": "1 GB"})  # an attempt to rate
    assert PracticeAttempt.objects.exists()
    limits(settings, per_address=100, per_learner=2)
    limiter_clock.advance(60)  # the counts start again
    assert write(client) < 400
    assert write(client) < 400
    refused = write(client)
    assert refused == 429


@pytest.mark.parametrize(
    ("address", "same_count", "other_count"),
    [
        ("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe", "2001:db8:1:3::1"),
        ("2001:db8:1:2:aaaa::1", "2001:0db8:0001:0002:0000:0000:0000:0009", "2001:db8::1"),
        ("203.0.113.7", "::ffff:203.0.113.7", "203.0.113.8"),
    ],
)
def test_an_ipv6_64_is_counted_as_one_address(settings, seed_card, address, same_count, other_count):
    limits(settings, per_address=2)
    assert Client(REMOTE_ADDR=address).post(SHOW_URL).status_code == 302
    assert Client(REMOTE_ADDR=same_count).post(SHOW_URL).status_code == 302
    assert Client(REMOTE_ADDR=same_count).post(SHOW_URL).status_code == 429
    assert Client(REMOTE_ADDR=address).post(SHOW_URL).status_code == 429
    assert Client(REMOTE_ADDR=other_count).post(SHOW_URL).status_code == 302


def test_the_login_limit_counts_an_ipv6_64_as_one_address_too(settings, db):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (3, 60)}
    statuses = [  # another account each time: only the address's count can refuse
        Client(REMOTE_ADDR=f"2001:db8:5:6::{n:x}")
        .post("/accounts/login/", {"username": f"nobody{n}", "password": "wrong"})
        .status_code
        for n in range(1, 6)
    ]
    assert statuses == [200] * 3 + [429] * 2


@pytest.mark.parametrize(
    ("address", "counted"),
    [
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("::ffff:198.51.100.4", "198.51.100.4"),
        ("198.51.100.4", "198.51.100.4"),
        ("unknown", "unknown"),
    ],
)
def test_the_address_a_limit_counts(address, counted):
    assert counted_address(address) == counted

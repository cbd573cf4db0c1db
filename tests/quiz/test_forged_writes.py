"""Writes from a visitor who never loaded a page: Django's CSRF lets anyone mint a cookie and
token pair, so such POSTs are answered like any other. What keeps them from steering the
class's statistics is that an anonymous learner counts on /instructor/ only once their own
recorded study spans some minutes, and that every write is rate-limited (tests/test_write_limits.py)."""

import re
import secrets

import pytest
from django.test import Client

from lessons.models import PracticeTemplate
from quiz.models import STUDIED_BEFORE_COUNTED, Rating
from tests.quiz.conftest import RATE_URL, SHOW_URL, rate, show
from tests.quiz.test_instructor import row_of

pytestmark = pytest.mark.django_db

PRACTICE_SLUG = "l05-kv-per-conversation"


def forger() -> Client:
    """A client that loaded no page: it invents its own CSRF cookie and the matching token."""
    client = Client(enforce_csrf_checks=True)
    secret = secrets.token_hex(16)  # 32 characters, as Django's unmasked secret
    client.cookies["csrftoken"] = secret
    client.defaults["HTTP_X_CSRFTOKEN"] = secret
    return client


def feed_of(body: str) -> list[str]:
    return re.findall(r"<blockquote>(.*?)</blockquote>", body)


def test_thirty_forged_missed_it_votes_stay_out_of_the_class_statistics(
    instructor_client, seed_card, settings
):
    for index in range(30):
        client = forger()
        assert client.post(SHOW_URL, {"answer": f"forged {index}"}).status_code == 302
        assert client.post(RATE_URL, {"rating": Rating.MISSED_IT}).status_code == 302

    body = instructor_client.get("/instructor/").content.decode()
    # Rated by, Missed it, Hard, Got it, Easy, revealed, opened Go deeper
    assert row_of(body, seed_card.label) == ["0"] * 7
    assert not any(answer.startswith("forged") for answer in feed_of(body))


def test_forged_practice_answers_stay_out_of_the_class_statistics(instructor_client, lessons):
    template = PracticeTemplate.objects.get(slug=PRACTICE_SLUG)
    for seed in range(1, 31):
        response = forger().post(f"/practice/{PRACTICE_SLUG}/", {"seed": seed, "answer": "1 GB"})
        assert response.status_code == 200
    body = instructor_client.get("/instructor/").content.decode()
    row = body.split('id="instructor-practice"')[1].split(f"L05 · {template.title}")[1].split("</tr>")[0]
    assert "<td>0</td>" in row


def test_an_anonymous_learner_counts_once_their_study_spans_the_minutes(
    instructor_client, seed_card, second_card, clock
):
    visitor = Client()
    show(visitor, "my own thought")
    rate(visitor, Rating.HARD)
    body = instructor_client.get("/instructor/").content.decode()
    assert row_of(body, seed_card.label)[:3] == ["0", "0", "0"]
    assert "my own thought" not in feed_of(body)
    assert "Anonymous sessions count as students once what they did spans 3 minutes" in body

    clock.advance(seconds=STUDIED_BEFORE_COUNTED.total_seconds() - 1)
    visitor.post(second_card.get_absolute_url() + "show/", {"answer": ""})
    assert row_of(instructor_client.get("/instructor/").content.decode(), seed_card.label)[0] == "0"

    clock.advance(seconds=1)
    visitor.post(second_card.get_absolute_url() + "show/", {"answer": ""})
    body = instructor_client.get("/instructor/").content.decode()
    assert row_of(body, seed_card.label)[:3] == ["1", "0", "1"]  # rated by 1, Hard 1
    assert "my own thought" in feed_of(body)


def test_a_signed_in_learner_counts_at_once(instructor_client, student_client, seed_card):
    show(student_client, "signed in thought")
    rate(student_client, Rating.MISSED_IT)
    body = instructor_client.get("/instructor/").content.decode()
    assert row_of(body, seed_card.label)[:2] == ["1", "1"]
    assert "signed in thought" in feed_of(body)


def test_a_forged_pair_still_saves_the_visitors_own_study(seed_card):
    """The limit is on the class's statistics, not on the visitor: their own progress is kept."""
    client = forger()
    client.post(SHOW_URL, {"answer": "mine"})
    client.post(RATE_URL, {"rating": Rating.GOT_IT})
    export = client.get("/progress/export.json").json()
    assert [(row["answer"], row["rating"]["label"]) for row in export["showings"]] == [("mine", "Got it")]

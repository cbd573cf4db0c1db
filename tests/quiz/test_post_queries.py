"""SQL per POST a student makes on every card: the rating POST writes only what changes, and the
Show answer POST writes one row. Without Redis, as here, each POST reads the session row and the
content version too, and the write limit counts the POST in the database: that one statement (in
Redis in production) is set apart from the study's."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from quiz.card_rating import Outcome, rate_showing
from quiz.learners import Learner
from quiz.models import CardState, Rating, Review, Showing
from tests.quiz.conftest import SHOW_URL, rate, show

pytestmark = pytest.mark.django_db

WRITES = ("INSERT", "UPDATE", "DELETE")


@pytest.fixture
def kept_card(other_student, seed_card):
    """Another student rated the card first: its page and next step are kept, as on a site in use."""
    client = Client()
    client.force_login(other_student)
    show(client, "warm")
    assert client.post(SHOW_URL, {"answer": "warm"}, headers={"HX-Request": "true"}).status_code == 200
    assert rate(client, Rating.GOT_IT).status_code == 200
    return seed_card


LIMITER_TABLE = "serving_ratelimitcount"


def statements_of(post) -> list[str]:
    """The POST's statements but the write limit's: one count, and now and then (at most once a
    minute per process) the deletion of ended windows."""
    with CaptureQueriesContext(connection) as captured:
        response = post()
    assert response.status_code == 200, response.content[:300]
    statements = [entry["sql"] for entry in captured.captured_queries]
    limiter = [sql for sql in statements if LIMITER_TABLE in sql]
    assert sum(sql.lstrip().upper().startswith("INSERT") for sql in limiter) == 1, limiter
    assert len(limiter) <= 2, limiter
    return [sql for sql in statements if LIMITER_TABLE not in sql]


def writes(statements: list[str]) -> list[str]:
    return [sql for sql in statements if sql.lstrip().upper().startswith(WRITES)]


def test_the_same_rating_again_writes_nothing(student_client, kept_card):
    show(student_client, "More users share each step")
    rate(student_client, Rating.GOT_IT)

    statements = statements_of(lambda: rate(student_client, Rating.GOT_IT))

    # The user, the showing with its review, the schedule (for "comes back in").
    assert len(statements) <= 5, "\n".join(statements)
    assert writes(statements) == []
    assert "comes back" in rate(student_client, Rating.GOT_IT).content.decode()


def test_a_first_rating_is_one_insert_of_the_review_and_one_of_the_schedule(student_client, kept_card):
    show(student_client, "More users share each step")

    statements = statements_of(lambda: rate(student_client, Rating.HARD))

    assert [sql.split()[2] for sql in writes(statements)] == ['"quiz_review"', '"quiz_cardstate"']
    assert len(statements) <= 14, "\n".join(statements)


def test_a_changed_rating_updates_the_review_and_the_schedule(student_client, kept_card):
    show(student_client, "More users share each step")
    rate(student_client, Rating.HARD)

    statements = statements_of(lambda: rate(student_client, Rating.EASY))

    assert [sql.split()[1] for sql in writes(statements)] == ['"quiz_review"', '"quiz_cardstate"']
    assert len(statements) <= 11, "\n".join(statements)
    state = CardState.objects.get(user__username="sam")
    assert state.last_rating == Rating.EASY and state.review_count == 1


def test_a_rating_stored_by_another_request_meanwhile_is_changed_not_doubled(student, seed_card):
    learner = Learner(user=student)
    showing = Showing.record(learner, seed_card, "typed")
    stale = Showing.objects.select_related("review").get(pk=showing.pk)  # loaded before the other rating
    stale.review_or_none  # noqa: B018 (read now: no review yet)
    rate_showing(Showing.objects.get(pk=showing.pk), Rating.HARD)  # the other request

    rated = rate_showing(stale, Rating.EASY)

    assert rated.outcome is Outcome.CHANGED
    assert Review.objects.get().rating == Rating.EASY
    assert CardState.objects.get().last_rating == Rating.EASY


def test_show_answer_writes_one_showing(student_client, kept_card):
    statements = statements_of(
        lambda: student_client.post(SHOW_URL, {"answer": "typed"}, headers={"HX-Request": "true"})
    )

    assert [sql.split()[2] for sql in writes(statements)] == ['"quiz_showing"']
    assert len(statements) <= 5, "\n".join(statements)

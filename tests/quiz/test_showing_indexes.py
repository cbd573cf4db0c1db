"""A learner who pressed Show answer thousands of times on one card: their latest showing and the
card page's showings are found through the (learner, card, time) indexes, not by reading every
showing they made of the card (5,000 of them doubled a Show answer POST's time; issue 23)."""

import pytest
from django.db import connection

from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import _LATEST_SHOWING, Rating, Showing
from quiz.selectors import _CARD_SHOWINGS

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="reads SQLite's EXPLAIN QUERY PLAN"),
]


def plan_of(prepared, student, card) -> list[str]:
    """SQLite's plan of a LearnerQuery's account SQL, one line per step."""
    plan = prepared._account._plans[connection.alias]
    values = {"user": student.pk, "card": card.pk}
    params = [values[param.name] if hasattr(param, "name") else param for param in plan.params]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + plan.sql, params)
        return [row[-1] for row in cursor.fetchall()]


@pytest.fixture
def pressed_often(student, seed_card) -> Learner:
    learner = Learner(user=student)
    rate_showing(Showing.record(learner, seed_card, "first"), Rating.HARD)
    Showing.objects.bulk_create([Showing(card=seed_card, user=student, answer="again") for _ in range(200)])
    return learner


def test_the_latest_showing_is_read_from_the_index_in_its_order(pressed_often, student, seed_card):
    _LATEST_SHOWING.run(pressed_often, card=seed_card.pk)

    plan = plan_of(_LATEST_SHOWING, student, seed_card)

    assert any("INDEX showing_account_card_time (user_id=? AND card_id=?)" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan  # no sort of all their showings


def test_the_card_page_reads_only_the_showings_its_subqueries_name(pressed_often, student, seed_card):
    _CARD_SHOWINGS.run(pressed_often, card=seed_card.pk)

    plan = plan_of(_CARD_SHOWINGS, student, seed_card)

    # The outer query reads showings by primary key only; the learner's showings of the card are
    # searched in the index, by the LIMIT 1 subquery (aliased U0), never scanned one by one.
    outer = [step for step in plan if "quiz_showing" in step]
    assert outer and all("INTEGER PRIMARY KEY" in step for step in outer), plan
    inner = [step for step in plan if " U0 " in step and "showing" in step and "review" not in step]
    assert inner and all("showing_account_card_time (user_id=? AND card_id=?)" in step for step in inner), (
        plan
    )

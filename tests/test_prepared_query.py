"""serving/prepared.py: a queryset's SQL built once, run with each call's values, gives what the
ORM gives (the related object, converted values, annotations) and only the asked-for rows."""

from datetime import UTC, datetime, timedelta

import django
import pytest
from django.db import connection, models
from django.test.utils import CaptureQueriesContext

from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import Rating, Review, Showing
from serving.prepared import CHECKED_DJANGO, PreparedQuery

pytestmark = pytest.mark.django_db


def _showings(user: int, card: int) -> models.QuerySet[Showing]:
    return (
        Showing.objects.filter(user_id=user, card_id=card)
        .select_related("review")
        .annotate(typed=models.functions.Length("answer"))
        .order_by("shown_at", "id")
    )


def test_each_call_returns_what_the_orm_returns_for_its_own_values(student, other_student, seed_card):
    builds = []

    def build(user: int, card: int) -> models.QuerySet[Showing]:
        builds.append((user, card))
        return _showings(user, card)

    prepared = PreparedQuery(Showing, build, user=-7_001, card=-7_002)
    mine = [Showing.record(Learner(user=student), seed_card, f"mine {index}") for index in range(3)]
    rate_showing(mine[1], Rating.HARD)
    Showing.record(Learner(user=other_student), seed_card, "theirs")

    for user in (student, other_student, student):
        rows = prepared.run(user=user.pk, card=seed_card.pk)
        expected = list(_showings(user.pk, seed_card.pk))
        assert [(row.pk, row.answer, row.shown_at, row.typed) for row in rows] == [
            (row.pk, row.answer, row.shown_at, row.typed) for row in expected
        ]
    assert builds == [(-7_001, -7_002)]  # built once, with the stand-ins

    rows = prepared.run(user=student.pk, card=seed_card.pk)
    assert rows[0].shown_at.tzinfo is not None  # the database's converters ran (SQLite stores text)
    with CaptureQueriesContext(connection) as captured:
        reviews = [row.review_or_none for row in rows]
    assert captured.captured_queries == []  # select_related's review came with the row
    assert [review and review.rating for review in reviews] == [None, Rating.HARD, None]
    assert prepared.run(user=student.pk, card=seed_card.pk + 1000) == []


def test_a_stand_in_the_sql_does_not_carry_is_refused(seed_card):
    # anonymous_id is text: the int stand-in reaches the SQL as "-7003", not as itself.
    prepared = PreparedQuery(
        Showing, lambda anonymous_id: Showing.objects.filter(anonymous_id=anonymous_id), anonymous_id=-7_003
    )
    with pytest.raises(ValueError, match="anonymous_id"):
        prepared.run(anonymous_id="abc")


def test_values_must_name_every_stand_in(seed_card):
    prepared = PreparedQuery(Showing, _showings, user=-7_001, card=-7_002)
    with pytest.raises(TypeError, match="card"):
        prepared.run(user=1)


def test_a_build_of_another_model_is_refused(seed_card):
    prepared = PreparedQuery(Review, _showings, user=-7_001, card=-7_002)
    with pytest.raises(TypeError, match="Showing"):
        prepared.run(user=1, card=seed_card.pk)


def test_a_build_of_values_instead_of_instances_is_refused(seed_card):
    prepared = PreparedQuery(
        Showing, lambda user: Showing.objects.filter(user_id=user).values_list("card_id"), user=-7_001
    )
    with pytest.raises(TypeError, match="ValuesListIterable"):
        prepared.run(user=1)


def test_a_datetime_stand_in_takes_each_call_s_moment(student, seed_card):
    prepared = PreparedQuery(
        Showing,
        lambda moment: Showing.objects.filter(shown_at__gt=moment).order_by("id"),
        moment=datetime(2001, 2, 3, 4, 5, 6, 789012, tzinfo=UTC),
    )
    first = Showing.record(Learner(user=student), seed_card, "first")
    second = Showing.record(Learner(user=student), seed_card, "second")
    Showing.objects.filter(pk=second.pk).update(shown_at=first.shown_at + timedelta(minutes=5))
    second.refresh_from_db()

    assert prepared.run(moment=first.shown_at - timedelta(seconds=1)) == [first, second]
    assert prepared.run(moment=first.shown_at) == [second]
    assert prepared.run(moment=second.shown_at) == []


def test_it_was_checked_against_the_django_installed():
    # PreparedQuery reads the ORM's internals: a Django it was not checked against may build a
    # different plan. Check it (these tests, the pages' query tests), then add the version.
    assert django.VERSION[:2] in CHECKED_DJANGO, (
        f"serving/prepared.py is unchecked on Django {django.get_version()}"
    )

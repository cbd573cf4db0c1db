"""Reviews recorded before showings existed each get a showing and a schedule."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_backfill_gives_old_reviews_a_showing_and_their_learner_a_schedule(lessons):
    executor = MigrationExecutor(connection)
    before = [("quiz", "0001_initial")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    Review = old.get_model("quiz", "Review")
    Card = old.get_model("lessons", "Card")
    User = old.get_model("auth", "User")
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    user = User.objects.create(username="early")
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    Review.objects.create(card=card, user=user, rating=3, reviewed_at=start)
    Review.objects.create(card=card, user=user, rating=3, reviewed_at=start + timedelta(minutes=11))
    Review.objects.create(card=card, session_key="visitor", rating=1, reviewed_at=start)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from quiz.models import CardState, Review, Showing

    assert Showing.objects.count() == 3
    assert all(review.showing.shown_at == review.reviewed_at for review in Review.objects.all())
    account = CardState.objects.get(user__username="early")
    assert (account.review_count, account.last_rating, account.fsrs_card["state"]) == (2, 3, 2)
    visitor = CardState.objects.get(user__isnull=True)
    assert visitor.due == start + timedelta(minutes=1)
    # 0007 replaced the stored session key with a random id, the same on every row.
    assert visitor.anonymous_id not in ("", "visitor")
    assert {row.anonymous_id for row in Showing.objects.filter(user__isnull=True)} == {visitor.anonymous_id}


@pytest.mark.django_db(transaction=True)
def test_schedule_rows_written_before_the_shared_base_read_back_unchanged(lessons):
    """CardState and PracticeState share ScheduleState now, with no migration: rows the 0008
    schema wrote are read, and rebuilt from their ratings, as they were."""
    executor = MigrationExecutor(connection)
    before = [("quiz", "0008_practice_attempts_and_schedules")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    User = old.get_model("auth", "User")
    user = User.objects.create(username="kept")
    card = old.get_model("lessons", "Card").objects.get(lesson__slug="concurrency-sweep", step=1)
    template = old.get_model("lessons", "PracticeTemplate").objects.get(slug="l05-kv-per-conversation")
    when = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
    fields = {
        "fsrs_card": {"state": 2, "stability": 3.1},
        "due": when + timedelta(days=3),
        "last_rating": 3,
        "last_reviewed_at": when,
        "review_count": 1,
    }
    old.get_model("quiz", "CardState").objects.create(card=card, user=user, **fields)
    old.get_model("quiz", "PracticeState").objects.create(template=template, user=user, **fields)
    old.get_model("quiz", "PracticeAttempt").objects.create(
        template=template, user=user, seed=1, typed="1", value=1.0, expected=1.0, ratio=1.0,
        verdict="right", proposed_rating=3, rating=3, answered_at=when,
    )  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from quiz.learners import Learner
    from quiz.models import CardState, PracticeState, ScheduleState

    assert issubclass(CardState, ScheduleState) and issubclass(PracticeState, ScheduleState)
    for model in (CardState, PracticeState):
        row = model.objects.get(user__username="kept")
        assert {name: getattr(row, name) for name in fields} == fields, model.__name__
    from django.contrib.auth import get_user_model

    account = Learner(user=get_user_model().objects.get(username="kept"))
    rebuilt = PracticeState.rebuild(account, template.pk)
    assert rebuilt.pk == PracticeState.objects.get().pk  # updated in place, not a second row
    assert (rebuilt.review_count, rebuilt.last_rating, rebuilt.last_reviewed_at) == (1, 3, when)


@pytest.mark.django_db(transaction=True)
def test_attempts_made_before_repeats_were_marked_count_each_problem_once_in_mastery(lessons):
    executor = MigrationExecutor(connection)
    before = [("quiz", "0011_close_within_three_tolerances")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    Attempt = old.get_model("quiz", "PracticeAttempt")
    template = old.get_model("lessons", "PracticeTemplate").objects.get(slug="l05-kv-per-conversation")
    user = old.get_model("auth", "User").objects.create(username="farmer")
    when = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
    fields = {"template": template, "typed": "1 GB", "value": 1.0, "ratio": 1.0, "verdict": "right",
              "first_verdict": "right", "proposed_rating": 3, "rating": 3}  # fmt: skip
    for minute, (seed, expected) in enumerate([(1, 2.0), (2, 2.0), (3, 4.0), (4, 2.0)]):
        Attempt.objects.create(
            user=user, seed=seed, expected=expected, answered_at=when + timedelta(minutes=minute), **fields
        )
    Attempt.objects.create(anonymous_id="someone", seed=9, expected=2.0, answered_at=when, **fields)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from quiz.models import PracticeAttempt

    repeats = PracticeAttempt.objects.filter(repeats_a_problem=True)
    assert sorted(repeats.values_list("seed", flat=True)) == [2, 4]  # another learner's is their own
    assert PracticeAttempt.objects.filter(is_review=True).count() == 5

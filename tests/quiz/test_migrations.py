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

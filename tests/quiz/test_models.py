"""Recording, changing, scheduling and merging, on the models themselves."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.db.models import Prefetch

from accounts.instructors import is_instructor
from quiz.card_rating import Outcome, rate_showing
from quiz.learners import Learner
from quiz.models import (
    ANSWER_MAX_LENGTH,
    CardState,
    Layer,
    LayerOpening,
    Rating,
    Review,
    Showing,
)
from quiz.selectors import LessonProgress
from quiz.shared_names import shared_name

pytestmark = pytest.mark.django_db


@pytest.fixture
def visitor() -> Learner:
    return Learner(anonymous_id="a-visitors-random-id")


def test_showing_keeps_the_typed_answer_trimmed_and_bounded(student, seed_card, clock):
    learner = Learner(user=student)
    showing = Showing.record(learner, seed_card, "  decode is memory-bound \n")
    assert showing.answer == "decode is memory-bound"
    assert showing.shown_at == clock.now() and showing.user == student and showing.anonymous_id == ""
    long = Showing.record(learner, seed_card, "x" * (ANSWER_MAX_LENGTH + 50))
    assert len(long.answer) == ANSWER_MAX_LENGTH


def test_a_row_belongs_to_exactly_one_learner(student, seed_card):
    with pytest.raises(IntegrityError), transaction.atomic():
        Showing.objects.create(card=seed_card, user=student, anonymous_id="also-anonymous")
    with pytest.raises(IntegrityError), transaction.atomic():
        Showing.objects.create(card=seed_card, user=None, anonymous_id="")


def test_for_learner_sees_only_that_learners_rows(student, other_student, seed_card, visitor):
    mine = Showing.record(Learner(user=student), seed_card, "mine")
    theirs = Showing.record(Learner(user=other_student), seed_card, "theirs")
    anonymous = Showing.record(visitor, seed_card, "visitor's")
    assert list(Showing.objects.for_learner(Learner(user=student))) == [mine]
    assert list(Showing.objects.for_learner(Learner(user=other_student))) == [theirs]
    assert list(Showing.objects.for_learner(visitor)) == [anonymous]
    assert not Showing.objects.for_learner(Learner()).exists()
    assert not Showing.objects.for_learner(Learner(anonymous_id="someone-else")).exists()


def test_rating_records_a_review_and_schedules_the_card(student, seed_card, clock):
    showing = Showing.record(Learner(user=student), seed_card)
    rated = rate_showing(showing, Rating.GOT_IT)
    assert rated.outcome is Outcome.SAVED
    review = Review.objects.get()
    assert (review.showing, review.card, review.user, review.rating) == (showing, seed_card, student, 3)
    state = CardState.objects.get()
    assert rated.state == state
    assert (state.user, state.last_rating, state.review_count) == (student, Rating.GOT_IT, 1)
    assert state.due == clock.now() + timedelta(minutes=10)


def test_changing_the_rating_within_a_minute_replaces_it(student, seed_card, clock):
    showing = Showing.record(Learner(user=student), seed_card)
    rate_showing(showing, Rating.GOT_IT)
    clock.advance(seconds=59)
    rated = rate_showing(showing, Rating.MISSED_IT)
    assert rated.outcome is Outcome.CHANGED
    review = Review.objects.get()
    assert review.rating == Rating.MISSED_IT
    state = CardState.objects.get()
    assert (state.review_count, state.last_rating) == (1, Rating.MISSED_IT)
    # Scheduled as if Missed it had been the only answer, given at the first press.
    assert state.due == review.reviewed_at + timedelta(minutes=1)


def test_after_a_minute_the_rating_is_final(student, seed_card, clock):
    showing = Showing.record(Learner(user=student), seed_card)
    rate_showing(showing, Rating.GOT_IT)
    due = CardState.objects.get().due
    clock.advance(minutes=1)
    rated = rate_showing(showing, Rating.EASY)
    assert rated.outcome is Outcome.FINAL
    assert Review.objects.get().rating == Rating.GOT_IT
    assert CardState.objects.get().due == due


def test_one_review_per_showing_is_a_database_rule(student, seed_card):
    showing = Showing.record(Learner(user=student), seed_card)
    rate_showing(showing, Rating.HARD)
    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.create(card=seed_card, user=student, showing=showing, rating=Rating.EASY)


def test_one_schedule_per_learner_and_card_is_a_database_rule(student, seed_card, clock, visitor):
    for learner in (Learner(user=student), visitor):
        rate_showing(Showing.record(learner, seed_card), Rating.HARD)
        fields = learner.owner_fields()
        with pytest.raises(IntegrityError), transaction.atomic():
            CardState.objects.create(
                card=seed_card, due=clock.now(), last_rating=1, last_reviewed_at=clock.now(), **fields
            )


def test_ratings_are_one_to_four_in_the_database(student, seed_card):
    showing = Showing.record(Learner(user=student), seed_card)
    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.create(card=seed_card, user=student, showing=showing, rating=5)


def test_schedule_replays_the_whole_history(student, seed_card, clock):
    learner = Learner(user=student)
    rate_showing(Showing.record(learner, seed_card), Rating.GOT_IT)
    clock.advance(minutes=11)
    rate_showing(Showing.record(learner, seed_card), Rating.GOT_IT)
    state = CardState.objects.get()
    assert state.review_count == 2
    assert state.fsrs_card["state"] == 2  # Review: past the learning steps
    assert state.due - clock.now() >= timedelta(days=1)


def test_current_showing_is_the_latest_while_open_for_rating(student, seed_card, clock):
    learner = Learner(user=student)
    Showing.record(learner, seed_card)
    clock.advance(seconds=5)
    latest = Showing.record(learner, seed_card)
    assert Showing.objects.current_for(learner, seed_card, clock.now()) == latest
    rate_showing(latest, Rating.EASY)
    clock.advance(seconds=30)
    assert Showing.objects.current_for(learner, seed_card, clock.now()) == latest
    clock.advance(seconds=30)
    assert Showing.objects.current_for(learner, seed_card, clock.now()) is None
    assert Showing.objects.current_for(Learner(), seed_card, clock.now()) is None


def test_merge_moves_a_sessions_work_to_the_account_without_loss_or_duplicates(
    student, seed_card, second_card, clock, visitor
):
    account = Learner(user=student)
    rate_showing(Showing.record(account, seed_card, "before"), Rating.GOT_IT)
    clock.advance(minutes=20)
    first = Showing.record(visitor, seed_card, "as a visitor")
    rate_showing(first, Rating.MISSED_IT)
    LayerOpening.record(first, Layer.DEEPER)
    clock.advance(minutes=2)
    rate_showing(Showing.record(visitor, second_card, ""), Rating.EASY)
    Showing.record(visitor, second_card, "shown, not rated")

    assert visitor.merge_into(student) == 2

    assert Review.objects.count() == 3 and Showing.objects.count() == 4
    assert not Review.objects.filter(user__isnull=True).exists()
    assert not Showing.objects.filter(user__isnull=True).exists()
    assert not CardState.objects.filter(user__isnull=True).exists()
    assert LayerOpening.objects.get().showing.user == student
    seed_state = CardState.objects.get(user=student, card=seed_card)
    assert (seed_state.review_count, seed_state.last_rating) == (2, Rating.MISSED_IT)
    assert CardState.objects.get(user=student, card=second_card).last_rating == Rating.EASY
    # Merging again finds nothing left to move.
    assert visitor.merge_into(student) == 0
    assert Review.objects.count() == 3


def test_lesson_progress_counts_rated_good_and_due(student, seed_card, second_card, clock):
    learner = Learner(user=student)
    rate_showing(Showing.record(learner, seed_card), Rating.EASY)
    lessons = type(seed_card.lesson).objects.prefetch_related(Prefetch("cards", to_attr="listed_cards"))
    lesson = lessons.get(pk=seed_card.lesson_id)
    progress = LessonProgress.by_lesson(learner, [lesson], clock.now())[lesson.pk]
    total = lesson.cards.count()
    assert total >= 2
    assert (progress.rated, progress.total, progress.good_percent) == (1, total, 100)
    assert progress.percent == round(100 / total)
    assert progress.due_count == 0
    rate_showing(Showing.record(learner, second_card), Rating.HARD)
    clock.advance(days=60)
    progress = LessonProgress.by_lesson(learner, [lesson], clock.now())[lesson.pk]
    assert (progress.rated, progress.good_percent, progress.due_count) == (2, 50, 2)
    labels = {item.card.pk: item.last_rating_label for item in progress.cards}
    assert (labels[seed_card.pk], labels[second_card.pk]) == ("Easy", "Hard")
    assert sorted(labels.values()).count("") == total - 2


def test_who_is_an_instructor(student, instructor):
    admin = User.objects.create_superuser("root", "root@example.org", "x")
    assert is_instructor(instructor) and is_instructor(admin)
    assert not is_instructor(student)
    assert not is_instructor(AnonymousUser())


def test_names_are_shown_only_with_consent(student, other_student):
    from quiz.models import LearnerProfile

    LearnerProfile.objects.create(user=student, share_name=True)
    LearnerProfile.objects.create(user=other_student, share_name=False)
    student.first_name, student.last_name = "Sam", "Okafor"
    assert shared_name(student) == "Sam Okafor"
    assert shared_name(other_student) == "a student (name not shared)"
    assert shared_name(None) == "anonymous"
    no_profile = User.objects.create_user("nadia")
    assert shared_name(no_profile) == "a student (name not shared)"


@pytest.mark.parametrize("rating", Rating.values)
def test_a_reviews_rating_label_is_its_display_text(rating):
    review = Review(rating=rating)
    assert review.rating_label == review.get_rating_display() == Rating(rating).label

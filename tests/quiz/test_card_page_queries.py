"""SQL per page for a signed-in student: the card page in at most four queries, the session and
the content version (from the database without Redis, as here), the user with their Instructors
flag and the showings with their reviews. The flag stays as fresh as the group, and sessions logged in before the flag's
backend stay logged in."""

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import Rating, Review, Showing
from quiz.rating_previews import Preview
from quiz.selectors import CardStudy
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db

CARD_PAGES = {
    "answer hidden": {},
    "answer shown": {"answer": "shown"},
    "answer hidden again": {"answer": "hidden"},
    "in review": {"answer": "shown", "review": "1"},
}
MAX_QUERIES = 4


def queries_of(client: Client, url: str, query: dict[str, str]) -> list[str]:
    client.get(url, query)  # the kept page is built, once per process and content version
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, query)
    assert response.status_code == 200
    assert b"Log out" in response.content
    return [entry["sql"] for entry in captured.captured_queries]


@pytest.mark.parametrize("page", CARD_PAGES)
def test_a_signed_in_card_page_costs_at_most_four_queries(page, clock, student_client, seed_card):
    show(student_client, "More users share each step")
    rate(student_client, Rating.GOT_IT)
    clock.advance(minutes=2)  # the rating closed: the page shows the history's previews
    show(student_client, "Again")

    queries = queries_of(student_client, SEED_CARD_URL, CARD_PAGES[page])

    assert len(queries) <= MAX_QUERIES, "\n".join(queries)


def test_the_previews_replay_the_reviews_before_the_open_showing(clock, student, student_client, seed_card):
    show(student_client, "first")
    rate(student_client, Rating.MISSED_IT)
    first_rated_at = clock.now()
    clock.advance(minutes=2)
    show(student_client, "second")
    rate(student_client, Rating.EASY)  # open for a minute: the previews leave it out

    study = CardStudy.of(Learner(user=student), seed_card)

    assert study.showing == Showing.objects.order_by("-shown_at", "-id").first()
    assert study.review.rating == Rating.EASY
    assert study.typed_answer == "second"
    history = [(Rating.MISSED_IT, first_rated_at)]
    assert study.previews == tuple(Preview.for_history(seed_card.pk, history, clock.now()))


def test_leaving_the_instructors_group_counts_on_the_next_page(instructor, instructors_group):
    client = Client()
    client.force_login(instructor)
    assert b'href="/instructor/"' in client.get("/").content

    instructor.groups.remove(instructors_group)

    assert b'href="/instructor/"' not in client.get("/").content


def test_a_session_logged_in_by_djangos_own_backend_stays_logged_in(student):
    client = Client()
    client.force_login(student, backend="django.contrib.auth.backends.ModelBackend")
    assert client.session[BACKEND_SESSION_KEY] == "django.contrib.auth.backends.ModelBackend"

    assert b"Log out" in client.get(SEED_CARD_URL).content


def test_a_wrong_password_is_checked_once(student, monkeypatch):
    from django.contrib.auth.backends import ModelBackend

    calls = []
    original = ModelBackend.authenticate
    monkeypatch.setattr(
        ModelBackend,
        "authenticate",
        lambda self, *args, **kwargs: calls.append(1) or original(self, *args, **kwargs),
    )

    response = Client().post("/accounts/login/", {"username": "sam", "password": "not-the-password"})

    assert response.status_code == 200  # the form again, with its error
    assert len(calls) == 1


def test_the_card_page_reads_the_rated_showings_and_the_latest_only(clock, student, seed_card):
    from django.db.models.signals import post_init

    learner = Learner(user=student)
    rated = Showing.record(learner, seed_card, "first")
    rate_showing(rated, Rating.HARD)
    clock.advance(minutes=2)
    for index in range(30):  # Show answer pressed again and again, never rated
        Showing.record(learner, seed_card, f"again {index}")
        clock.advance(seconds=1)
    latest = Showing.objects.order_by("-shown_at", "-id").first()
    CardStudy.of(learner, seed_card)  # its query is built once per process, with a stand-in showing
    loaded = []

    def count(sender, instance, **kwargs):
        loaded.append(instance.pk)

    post_init.connect(count, sender=Showing)
    try:
        study = CardStudy.of(learner, seed_card)
    finally:
        post_init.disconnect(count, sender=Showing)

    assert sorted(loaded) == sorted([rated.pk, latest.pk])
    assert study.showing == latest and study.typed_answer == "again 29"
    history = [(Rating.HARD, Review.objects.get().reviewed_at)]
    assert study.previews == tuple(Preview.for_history(seed_card.pk, history, clock.now()))

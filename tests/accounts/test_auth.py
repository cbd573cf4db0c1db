"""Sign up, log in, log out; the session's progress joins the account at log in."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import CardState, LearnerProfile, Rating, Review, Showing
from tests.conftest import PASSWORD, SEED_CARD_URL
from tests.quiz.conftest import anonymous_learner, rate, show

pytestmark = pytest.mark.django_db


def study_anonymously(client: Client, *cards_and_ratings) -> Learner:
    for url, rating in cards_and_ratings:
        client.post(url + "show/", {"answer": f"guess for {url}"})
        rate(client, rating, url=url + "rate/")
    return anonymous_learner(client)


def test_login_page_is_ours(client):
    body = client.get("/accounts/login/").content.decode()
    assert "<h1>Log in</h1>" in body and 'name="username"' in body and 'name="password"' in body
    assert 'class="account-form"' in body and "joins your account" in body


def test_log_in_joins_the_sessions_progress_without_losing_or_duplicating(
    client, student, seed_card, second_card, clock
):
    account = Learner(user=student)
    rate_showing(Showing.record(account, seed_card, "from before"), Rating.EASY)
    clock.advance(minutes=30)
    visitor = study_anonymously(client, (SEED_CARD_URL, 1), (second_card.get_absolute_url(), 3))
    old_key = client.session.session_key

    response = client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert response.status_code == 302
    assert client.session.session_key != old_key  # Django cycled it; the progress still came along

    assert Review.objects.count() == 3 and Showing.objects.count() == 3
    assert set(Review.objects.values_list("user", flat=True)) == {student.pk}
    assert not Review.objects.for_learner(visitor).exists()
    seed_state = CardState.objects.get(user=student, card=seed_card)
    assert (seed_state.review_count, seed_state.last_rating) == (2, Rating.MISSED_IT)
    assert CardState.objects.filter(user=student).count() == 2
    assert not CardState.objects.filter(user__isnull=True).exists()

    # Logging out and in again adds nothing.
    client.post("/accounts/logout/")
    client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert Review.objects.count() == 3


def test_failed_log_in_keeps_the_progress_with_the_session(client, student, seed_card):
    visitor = study_anonymously(client, (SEED_CARD_URL, 3))
    response = client.post("/accounts/login/", {"username": "sam", "password": "wrong"})
    assert response.status_code == 200 and "correct username and password" in response.content.decode()
    assert Review.objects.for_learner(visitor).count() == 1


def test_someone_elses_anonymous_progress_does_not_join(client, student, seed_card):
    stranger = Client()
    study_anonymously(stranger, (SEED_CARD_URL, 2))
    client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert not Review.objects.filter(user=student).exists()
    assert Review.objects.filter(user__isnull=True).count() == 1


def test_sign_up_creates_the_account_logs_in_and_keeps_progress(client, seed_card):
    study_anonymously(client, (SEED_CARD_URL, 4))
    response = client.post(
        "/accounts/signup/",
        {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "share_name": "on"},
    )
    assert response.status_code == 302 and response["Location"] == "/progress/"
    user = User.objects.get(username="newbie")
    assert LearnerProfile.objects.get(user=user).share_name is True
    assert client.session["_auth_user_id"] == str(user.pk)
    assert Review.objects.get().user == user
    assert CardState.objects.get().user == user


def test_sign_up_without_consent_keeps_the_name_private(client, db):
    client.post("/accounts/signup/", {"username": "quiet", "password1": PASSWORD, "password2": PASSWORD})
    assert LearnerProfile.objects.get(user__username="quiet").share_name is False


def test_sign_up_errors_are_shown_on_our_page(client, student):
    response = client.post("/accounts/signup/", {"username": "sam", "password1": "a", "password2": "b"})
    body = response.content.decode()
    assert response.status_code == 200 and "<h1>Sign up</h1>" in body
    assert 'class="field-error"' in body
    assert User.objects.count() == 1


def test_sign_up_only_follows_local_next(client, db):
    data = {"username": "n", "password1": PASSWORD, "password2": PASSWORD}
    assert client.post("/accounts/signup/?next=https://evil.example/", data)["Location"] == "/progress/"
    other = Client()
    data["username"] = "m"
    assert other.post("/accounts/signup/", {**data, "next": "/review/"})["Location"] == "/review/"


def test_log_out_is_a_post(student_client):
    assert student_client.get("/accounts/logout/").status_code == 405
    assert student_client.post("/accounts/logout/")["Location"] == "/"
    assert "_auth_user_id" not in student_client.session


def test_nav_offers_log_in_and_sign_up_or_log_out(client, student_client, instructor_client, lessons):
    anonymous = client.get("/").content.decode()
    assert 'href="/accounts/login/?next=/"' in anonymous and 'href="/accounts/signup/?next=/"' in anonymous
    assert 'href="/progress/"' in anonymous and 'href="/review/"' in anonymous
    assert 'action="/accounts/logout/"' not in anonymous and 'href="/instructor/"' not in anonymous
    signed_in = student_client.get("/").content.decode()
    assert 'action="/accounts/logout/"' in signed_in and 'href="/accounts/login/' not in signed_in
    assert 'href="/instructor/"' not in signed_in
    assert 'href="/instructor/"' in instructor_client.get("/").content.decode()


def test_showing_an_answer_then_logging_in_shows_it_back(client, student, seed_card):
    show(client, "remember me")
    client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert "remember me" in client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()


@pytest.mark.django_db
def test_log_in_attempts_are_rate_limited_with_retry_after(client, student, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (3, 60)}
    wrong = {"username": student.username, "password": "not-it"}
    assert [client.post("/accounts/login/", wrong).status_code for _ in range(3)] == [200, 200, 200]
    response = client.post("/accounts/login/", {"username": student.username, "password": PASSWORD})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert "Too many requests" in response.content.decode()
    assert client.get("/accounts/login/").status_code == 200  # the form itself stays readable


@pytest.mark.django_db
def test_sign_ups_share_the_log_in_rate_limit(client, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (2, 60)}
    data = {"username": "x", "password1": "short", "password2": "other"}
    assert [client.post("/accounts/signup/", data).status_code for _ in range(2)] == [200, 200]
    assert client.post("/accounts/signup/", data).status_code == 429

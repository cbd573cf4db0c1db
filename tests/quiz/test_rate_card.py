import pytest
from django.test import Client

from quiz.models import CardState, Rating, Review, Showing
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import RATE_URL, anonymous_learner, rate, show

pytestmark = pytest.mark.django_db


def test_rating_without_csrf_token_is_refused(seed_card):
    client = Client(enforce_csrf_checks=True)
    assert client.post(RATE_URL, {"rating": 3}).status_code == 403
    assert not Review.objects.exists()


def test_rating_with_csrf_token_from_the_page_is_recorded(seed_card):
    client = Client(enforce_csrf_checks=True)
    page = client.get(SEED_CARD_URL, {"answer": "shown"})
    token = page.cookies["csrftoken"].value
    response = client.post(RATE_URL, {"rating": 3, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    review = Review.objects.get()
    assert review.card == seed_card and review.rating == Rating.GOT_IT
    assert review.user is None and review.anonymous_id == anonymous_learner(client).anonymous_id
    # A random id of its own: the row never holds the visitor's session key.
    assert review.anonymous_id != client.session.session_key


def test_plain_post_redirects_back_with_an_acknowledgement(client, seed_card):
    response = client.post(RATE_URL, {"rating": 1}, follow=True)
    assert response.redirect_chain[-1][0] == SEED_CARD_URL + "?answer=shown#how-did-you-do"
    assert "Saved: Missed it." in response.content.decode()


def test_htmx_post_answers_in_place(student_client, student, seed_card):
    response = student_client.post(RATE_URL, {"rating": 4}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "Saved: <strong>Easy</strong>" in response.content.decode()
    assert "<html" not in response.content.decode()
    assert Review.objects.get().user == student


@pytest.mark.parametrize("rating", ["", "0", "5", "abc", "3.5", "-1"])
def test_bad_rating_is_a_clear_400(client, seed_card, rating):
    response = client.post(RATE_URL, {"rating": rating})
    assert response.status_code == 400
    assert "rating must be one of" in response.content.decode()
    assert not Review.objects.exists()


def test_get_is_not_allowed(client, seed_card):
    assert client.get(RATE_URL).status_code == 405


def test_unknown_card_is_404(client, lessons):
    assert client.post(SEED_CARD_URL.replace("step-1", "step-9") + "rate/", {"rating": 3}).status_code == 404


def test_rating_belongs_to_the_showing_the_page_names(client, seed_card, clock):
    show(client, "first")
    clock.advance(seconds=5)
    show(client, "second")
    first, latest = Showing.objects.order_by("shown_at")
    rate(client, 2, showing=first.pk)
    assert Review.objects.get().showing == first
    assert not Review.objects.filter(showing=latest).exists()


def test_rating_a_plain_link_page_uses_the_open_showing_or_starts_one(client, seed_card, clock):
    show(client, "typed")
    rate(client, 3)  # no showing named: the open one
    assert Review.objects.get().showing.answer == "typed"
    clock.advance(minutes=5)
    rate(client, 1)  # that showing is rated and closed: a new one
    assert Review.objects.count() == 2 and Showing.objects.count() == 2


def test_changing_the_rating_within_a_minute_replaces_it(client, seed_card, clock):
    show(client)
    first = rate(client, 3)
    showing = Showing.objects.get()
    assert f'id="rating-showing" value="{showing.pk}" hx-swap-oob="true"' in first.content.decode()
    clock.advance(seconds=40)
    second = rate(client, 1, showing=showing.pk)
    assert "Changed to: <strong>Missed it</strong>" in second.content.decode()
    review = Review.objects.get()
    assert review.rating == Rating.MISSED_IT
    assert CardState.objects.get().review_count == 1


def test_after_a_minute_the_rating_for_that_showing_is_final(client, seed_card, clock):
    show(client)
    rate(client, 4)
    showing = Showing.objects.get()
    clock.advance(seconds=61)
    response = rate(client, 1, showing=showing.pk)
    assert "final for this time through the card: <strong>Easy</strong>" in response.content.decode()
    assert Review.objects.get().rating == Rating.EASY
    plain = client.post(RATE_URL, {"rating": 1, "showing": showing.pk}, follow=True)
    assert "Your rating is final for this time through the card: Easy." in plain.content.decode()
    assert Review.objects.count() == 1


def test_the_acknowledgement_says_when_the_card_comes_back(client, seed_card, clock):
    show(client)
    body = rate(client, 3).content.decode()
    # In UTC, in a <time> the page's script rewrites to the student's own time zone.
    assert (
        'comes back in 10 min (<time datetime="2026-03-02T09:10:00Z" data-local-time="short">'
        "2 Mar, 09:10 UTC</time>)" in body
    )


def test_another_students_showing_cannot_be_rated(student_client, other_student_client, seed_card):
    show(student_client, "mine")
    showing = Showing.objects.get()
    response = rate(other_student_client, 1, showing=showing.pk)
    assert response.status_code == 404
    assert not Review.objects.exists()


@pytest.mark.parametrize("showing", ["abc", "-1", "999999", "1" * 30, "١٢"])
def test_unknown_showing_is_404(client, seed_card, showing):
    show(client)
    assert rate(client, 3, showing=showing).status_code == 404
    assert not Review.objects.exists()


def test_in_review_mode_a_plain_post_moves_on_to_the_next_due_card(client, seed_card):
    response = client.post(RATE_URL, {"rating": 3, "review": "1"})
    assert response.status_code == 302 and response["Location"] == "/review/next/"


def test_in_review_mode_the_htmx_ack_links_to_the_next_due_card(client, seed_card):
    body = rate(client, 3, review="1").content.decode()
    assert 'href="/review/next/"' in body


def test_rated_showing_is_marked_on_the_full_page(client, seed_card):
    show(client)
    client.post(RATE_URL, {"rating": 2})
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "You rated it <strong>Hard</strong> this time" in body

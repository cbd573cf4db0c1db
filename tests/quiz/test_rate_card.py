import pytest
from django.test import Client

from quiz.models import Rating, Review
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db
RATE_URL = SEED_CARD_URL + "rate/"


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
    assert review.user is None and review.session_key == client.session.session_key


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

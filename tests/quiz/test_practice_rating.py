"""Changing a practice problem's proposed rating: without JavaScript a confirmation page that says
what was stored and where to go next; with htmx the rating section swapped in place."""

import time

import pytest

from lessons.models import PracticeTemplate
from quiz.models import PracticeAttempt, PracticeState, Rating

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"
URL = f"/practice/{SLUG}/"


@pytest.fixture
def attempt(client, lessons, clock) -> PracticeAttempt:
    value = PracticeTemplate.objects.get(slug=SLUG).problem(4).answer
    assert client.post(URL, {"seed": 4, "answer": f"{value}", "shown_at": time.time()}).status_code == 200
    return PracticeAttempt.objects.get()


def test_without_javascript_the_change_returns_a_confirmation_page(client, attempt):
    response = client.post(URL + "rate/", {"attempt": attempt.pk, "rating": Rating.HARD})
    page = response.content.decode()
    assert response.status_code == 200 and "<h1" in page and "Rating stored" in page
    assert "Stored: Hard. This problem comes back in " in page and "with new numbers" in page
    assert f"problem {attempt.seed}: you answered <strong>{attempt.typed}</strong>, right" in page
    assert 'id="another"' in page and f'href="{URL}?seed=' in page
    assert 'href="/practice/">Back to practice</a>' in page
    # Still within the minute: the buttons are there to change it again, Hard pressed.
    assert 'value="2" class="button rating rating-2" aria-pressed="true"' in page
    assert PracticeState.objects.get().last_rating == Rating.HARD


def test_with_htmx_only_the_rating_section_comes_back(client, attempt):
    response = client.post(
        URL + "rate/", {"attempt": attempt.pk, "rating": Rating.EASY}, headers={"HX-Request": "true"}
    )
    page = response.content.decode()
    assert response.status_code == 200 and "HX-Request" in response["Vary"]
    assert page.lstrip().startswith('<section class="practice-rating"') and "<html" not in page
    assert "Stored: Easy." in page and 'id="another"' not in page  # the page keeps its own link
    assert PracticeAttempt.objects.get().rating == Rating.EASY


def test_after_the_minute_the_page_says_what_stays_stored(client, attempt, clock):
    clock.advance(minutes=2)
    page = client.post(URL + "rate/", {"attempt": attempt.pk, "rating": Rating.MISSED_IT}).content.decode()
    assert "That rating is final" in page and "Got it stays stored" in page
    assert 'class="rating-form"' not in page and 'href="/practice/">Back to practice</a>' in page
    assert PracticeAttempt.objects.get().rating == Rating.GOT_IT


def test_a_bad_rating_is_a_clear_400_and_changes_nothing(client, attempt):
    response = client.post(URL + "rate/", {"attempt": attempt.pk, "rating": "7"})
    assert response.status_code == 400 and "rating must be 1 to 4" in response.content.decode()
    assert PracticeAttempt.objects.get().rating == Rating.GOT_IT

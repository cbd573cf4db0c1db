import pytest
from django.test import Client

from lessons.models import Card
from quiz.learners import LEARNER_SESSION_FIELD, Learner
from tests.conftest import SEED_CARD_URL
from tests.quiz.clocks import MovableClock

SHOW_URL = SEED_CARD_URL + "show/"
RATE_URL = SEED_CARD_URL + "rate/"
OPENED_URL = SEED_CARD_URL + "opened/"


@pytest.fixture
def clock(monkeypatch) -> MovableClock:
    return MovableClock(monkeypatch)


@pytest.fixture
def second_card(seed_card) -> Card:
    """Another step in lesson 03, so order and counts mean something."""
    last = Card.objects.filter(lesson=seed_card.lesson).order_by("-step").first()
    return Card.objects.create(
        lesson=seed_card.lesson,
        step=last.step + 1,
        title="The knee",
        question="Where is the knee?",
        plain_words="At 8.",
    )


def anonymous_learner(client: Client) -> Learner:
    """The learner an anonymous test client records as."""
    return Learner(anonymous_id=client.session[LEARNER_SESSION_FIELD])


def show(client: Client, answer: str = "", **extra) -> None:
    response = client.post(SHOW_URL, {"answer": answer, **extra})
    assert response.status_code == 302, response.content[:500]


def rate(client: Client, rating: int, url: str = RATE_URL, **extra):
    return client.post(url, {"rating": rating, **extra}, headers={"HX-Request": "true"})

"""Home is kept but for the learner's map: whichever learners came first, each gets the map a
fresh build gives them, and a learner's rating shows on their next visit."""

import pytest
from django.test import Client

from lessons.models import Card
from tests.quiz.clocks import MovableClock
from tests.support.learners_looks import Learners, assert_each_gets_a_fresh_build, page_of

pytestmark = pytest.mark.django_db

COURSE = "/learn/llm-inference-performance"
FIRST_CARD = f"{COURSE}/setup-and-guardrails/step-1/"
SECOND_CARD = f"{COURSE}/setup-and-guardrails/step-2/"
SWEEP_CARD = f"{COURSE}/concurrency-sweep/step-1/"


def study(client: Client, card_url: str, rating: int | None) -> None:
    client.post(card_url + "show/", {"answer": "an answer"})
    if rating is not None:
        client.post(card_url + "rate/", {"rating": rating})


home = page_of("/")


@pytest.fixture
def learners(lessons, monkeypatch, django_user_model) -> Learners:
    """Learners whose maps differ in one thing each: what they opened, rated, and what is due."""
    clock = MovableClock(monkeypatch)
    made = Learners(django_user_model)
    learner = made.add

    learner("signed in, nothing done")
    study(learner("opened one card"), FIRST_CARD, None)
    study(learner("rated one card"), FIRST_CARD, 3)
    study(learner("missed one card"), FIRST_CARD, 1)  # due again within minutes
    opened_two = learner("opened two cards")  # where to continue as the next learner's: step 1
    study(opened_two, FIRST_CARD, None)
    study(opened_two, SECOND_CARD, None)
    rated_the_second = learner("opened two cards, rated the second")
    study(rated_the_second, FIRST_CARD, None)
    study(rated_the_second, SECOND_CARD, 3)
    rated_two = learner("rated two cards")
    study(rated_two, FIRST_CARD, 3)
    study(rated_two, SECOND_CARD, 3)
    study(learner("rated a card in another lesson"), SWEEP_CARD, 4)
    everything = learner("rated every card of the first lesson")
    for card in Card.objects.filter(lesson__slug="setup-and-guardrails"):
        study(everything, card.get_absolute_url(), 4)
    clock.advance(minutes=3)  # Missed it is due again after a minute, Got it after ten
    return made.settled()


def test_each_learner_gets_the_map_a_fresh_build_gives_whoever_came_first(learners):
    assert_each_gets_a_fresh_build(learners, home)


def test_a_rating_shows_on_the_next_visit(learners):
    client = learners["rated one card"]
    before = home(client)
    assert "Continue: Lesson 00 · Step 2" in before

    study(client, SECOND_CARD, 3)

    after = home(client)
    assert after != before
    assert "Continue: Lesson 00 · Step 3" in after
    assert "2 seen · 2 rated" in after

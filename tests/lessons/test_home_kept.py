"""Home keeps each course's section of the map by how the learner's map looks
(quiz.course_map.CourseMap.look): whichever learners came first, each gets the map a fresh
build gives them, and a learner's rating shows on their next visit."""

import pytest
from django.test import Client

from lessons.models import Card
from serving.content_cache import content_changed
from tests.quiz.clocks import MovableClock
from tests.textutil import without_csrf_tokens

pytestmark = pytest.mark.django_db

COURSE = "/learn/llm-inference-performance"
FIRST_CARD = f"{COURSE}/setup-and-guardrails/step-1/"
SECOND_CARD = f"{COURSE}/setup-and-guardrails/step-2/"
SWEEP_CARD = f"{COURSE}/concurrency-sweep/step-1/"


def study(client: Client, card_url: str, rating: int | None) -> None:
    client.post(card_url + "show/", {"answer": "an answer"})
    if rating is not None:
        client.post(card_url + "rate/", {"rating": rating})


def home(client: Client) -> str:
    response = client.get("/")
    assert response.status_code == 200
    return without_csrf_tokens(response.content.decode())


@pytest.fixture
def learners(lessons, monkeypatch, django_user_model) -> dict[str, Client]:
    """Learners whose maps differ in one thing each: what they opened, rated, and what is due."""
    clock = MovableClock(monkeypatch)
    made: dict[str, Client] = {"first visit": Client()}

    def learner(name: str) -> Client:
        client = Client()
        client.force_login(django_user_model.objects.create_user(name.replace(" ", "-"), password="x" * 20))
        made[name] = client
        return client

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
    for client in made.values():
        client.get("/review/")  # shows the ratings' Saved messages, which home would show once
    content_changed()
    return made


def test_each_learner_gets_the_map_a_fresh_build_gives_whoever_came_first(learners):
    kept_from_others = {name: home(client) for name, client in learners.items()}
    for name, client in reversed(learners.items()):
        content_changed()  # nothing kept: this learner's map is built for them alone
        assert home(client) == kept_from_others[name], name
    assert len(set(kept_from_others.values())) == len(learners)  # every map differs from the others


def test_a_rating_shows_on_the_next_visit(learners):
    client = learners["rated one card"]
    before = home(client)
    assert "Continue: Lesson 00 · Step 2" in before

    study(client, SECOND_CARD, 3)

    after = home(client)
    assert after != before
    assert "Continue: Lesson 00 · Step 3" in after
    assert "2 seen · 2 rated" in after

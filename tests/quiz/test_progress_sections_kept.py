"""/progress/'s summary, practice section and courses are the learner's own, rendered on each
request: whichever learners came first, each gets the page a fresh build gives them, and no
learner's name reaches another."""

import time

import pytest
from django.test import Client

from lessons.models import PracticeTemplate
from tests.quiz.clocks import MovableClock
from tests.support.learners_looks import Learners, assert_each_gets_a_fresh_build, page_of

pytestmark = pytest.mark.django_db

CARD = "/learn/llm-inference-performance/setup-and-guardrails/step-1/"
PRACTICE = "l05-kv-per-conversation"


def rate(client: Client, rating: int) -> None:
    client.post(CARD + "show/", {"answer": "an answer"})
    client.post(CARD + "rate/", {"rating": rating})


def practise(client: Client, seed: int, right: bool) -> None:
    value = PracticeTemplate.objects.get(slug=PRACTICE).problem(seed).answer
    answer = value if right else value * 3
    response = client.post(
        f"/practice/{PRACTICE}/", {"seed": seed, "answer": f"{answer}", "shown_at": time.time()}
    )
    assert response.status_code == 200


progress = page_of("/progress/")


@pytest.fixture
def learners(lessons, monkeypatch, django_user_model) -> Learners:
    clock = MovableClock(monkeypatch)
    made = Learners(django_user_model)
    learner = made.add

    learner("sam, nothing done")
    learner("alex, nothing done")  # the same progress as sam's, another name
    rate(learner("rated Got it"), 3)
    rate(learner("rated Missed it"), 1)  # due again after a minute
    practise(learner("one right answer"), 4, right=True)
    practise(learner("one wrong answer"), 4, right=False)
    two = learner("two answers")
    practise(two, 4, right=True)
    practise(two, 5, right=True)
    clock.advance(minutes=3)
    return made.settled()


def test_each_learner_gets_the_page_a_fresh_build_gives_whoever_came_first(learners):
    assert_each_gets_a_fresh_build(learners, progress)


def test_no_learners_name_reaches_another(learners):
    sams = progress(learners["sam, nothing done"])
    alexs = progress(learners["alex, nothing done"])

    assert "Signed in as <strong>sam,-nothing-done</strong>" in sams
    assert "sam," not in alexs and "Signed in as <strong>alex,-nothing-done</strong>" in alexs
    assert "Signed in as" not in progress(learners["first visit"])


def test_a_rating_and_an_answer_show_on_the_next_visit(learners):
    client = learners["sam, nothing done"]
    assert "<dt>Cards rated</dt><dd><strong>0</strong>" in progress(client)

    rate(client, 3)
    practise(client, 4, right=True)
    client.get("/review/")  # the Saved message

    page = progress(client)
    assert "<dt>Cards rated</dt><dd><strong>1</strong>" in page
    assert 'id="practice-table"' in page


def test_each_learner_sees_their_own_email_address_and_sharing_choice(lessons, django_user_model):
    made = Learners(django_user_model)
    made.add("sam")
    made.add("alex")
    made.add("kim")
    django_user_model.objects.filter(username="sam").update(email="sam&co@example.com")
    django_user_model.objects.filter(username="alex").update(email="alex@example.com")
    made["alex"].post("/progress/sharing/", {"share_name": "on"})
    made.settled()

    sams, alexs, kims, firsts = (progress(made[name]) for name in ("sam", "alex", "kim", "first visit"))

    assert "Change your email address (sam&amp;co@example.com)" in sams and "alex@" not in sams
    assert "Change your email address (alex@example.com)" in alexs and "sam&amp;co" not in alexs
    assert "Add an email address" in kims and "@example.com" not in kims
    assert 'id="id_share_name">' in sams and 'id="id_share_name">' in kims
    assert 'id="id_share_name" checked>' in alexs
    assert "Your account" not in firsts and 'name="share_name"' not in firsts
    assert '<a href="/accounts/signup/?next=/progress/">Sign up</a>' in firsts
    assert 'action="/progress/sharing/"' in sams

"""Where a student goes after rating a card: the next step, or after a lesson's last, the next lesson."""

import pytest

from lessons.models import Card, Lesson
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db


@pytest.fixture
def nineteen_lessons(lessons) -> list[Lesson]:
    """The course's 19 lessons, 00 to 18, around the bundled lesson 03; each with two cards."""
    lesson_03 = Lesson.objects.get(slug="concurrency-sweep")
    bundled = set(Lesson.objects.values_list("number", flat=True))
    for number in range(19):
        if number in bundled:
            continue
        lesson = Lesson.objects.create(
            course=lesson_03.course,
            number=number,
            order=number,
            slug=f"lesson-{number:02d}",
            title=f"Topic {number}",
        )
        for step in (1, 2):
            Card.objects.create(
                lesson=lesson, step=step, title=f"Card {step}", question="Q?", plain_words="A."
            )
    return list(Lesson.objects.order_by("order", "number"))


def test_following_walks_all_nineteen_lessons_in_order(nineteen_lessons):
    walked = [nineteen_lessons[0]]
    while (after := walked[-1].following) is not None:
        walked.append(after)
    assert [lesson.number for lesson in walked] == list(range(19))


def test_drafts_are_skipped_by_the_next_lesson_and_the_next_step(nineteen_lessons):
    Lesson.objects.filter(number=4).update(published=False)
    assert Lesson.objects.get(number=3).following.number == 5
    first = Card.objects.filter(lesson__number=5).order_by("step").first()
    Card.objects.filter(lesson__number=5).exclude(pk=first.pk).update(published=False)
    assert first.following is None


def test_rating_the_last_card_of_lesson_03_offers_lesson_04(client, nineteen_lessons):
    step_3 = SEED_CARD_URL.replace("step-1", "step-3")
    client.post(step_3 + "show/", {"answer": ""})
    body = client.post(step_3 + "rate/", {"rating": 3}, headers={"HX-Request": "true"}).content.decode()
    lesson_04 = Lesson.objects.get(number=4)
    assert "You finished Lesson 03 · Concurrency sweep." in body
    assert f'href="{lesson_04.get_absolute_url()}">Next lesson: 04 · {lesson_04.title} →' in body


def test_the_last_lesson_says_it_was_the_last(client, nineteen_lessons):
    last = Card.objects.filter(lesson__number=18).order_by("-step").first()
    url = last.get_absolute_url()
    client.post(url + "show/", {"answer": ""})
    body = client.post(url + "rate/", {"rating": 3}, headers={"HX-Request": "true"}).content.decode()
    assert f"You finished Lesson 18 · {last.lesson.title}." in body
    assert "That was the last lesson of LLM inference performance." in body
    assert "Next lesson" not in body


def test_a_middle_card_offers_the_next_step(client, lessons):
    client.post(SEED_CARD_URL + "show/", {"answer": ""})
    body = client.post(
        SEED_CARD_URL + "rate/", {"rating": 3}, headers={"HX-Request": "true"}
    ).content.decode()
    assert 'rel="next">Next: Step 2 · Sizing from the capacity line →</a>' in body
    assert "You finished" not in body

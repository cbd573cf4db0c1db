"""The home page keeps each run of lessons a learner has not touched (issue 23): such lessons
read the same for every learner whose map has the same run, so a run is rendered once per
content version. Each learner gets the page a fresh render gives them."""

import pytest
from django.test import Client

from lessons.models import Card
from pagecache.content_cache import CONTENT
from quiz.models import Rating
from tests.quiz.conftest import rate
from tests.textutil import page_without_csrf_tokens

pytestmark = pytest.mark.django_db
STATS = 'class="lesson-progress-stats"'  # "1 seen · 1 rated": a lesson the learner touched


def page(client: Client) -> str:
    return page_without_csrf_tokens(client, "/")


def lesson_item(html: str, card: Card) -> str:
    start = html.index(f'id="lesson-{card.lesson.slug}"')
    return html[start : html.index("</li>\n", html.index("</details>", start))]


def study(client: Client, card: Card, rating: Rating | None) -> None:
    url = card.get_absolute_url()
    assert client.post(url + "show/", {"answer": "typed"}).status_code == 302
    if rating is not None:
        assert rate(client, rating, url=url + "rate/").status_code == 200


@pytest.fixture
def cards(lessons) -> list[Card]:
    published = Card.objects.filter(published=True, lesson__published=True).select_related("lesson")
    by_lesson: dict[int, Card] = {}
    for card in published.order_by("lesson__order", "lesson__number", "step"):
        by_lesson.setdefault(card.lesson_id, card)
    return list(by_lesson.values())


def test_each_learner_gets_what_a_fresh_render_gives(clock, cards, student_client, other_student):
    other = Client()
    other.force_login(other_student)
    study(student_client, cards[1], Rating.GOT_IT)
    # Opened, not rated (seen), on both sides of the student's lesson: for this learner that
    # lesson is a run of one untouched lesson, as it is a run of one touched one for the student.
    study(other, cards[0], None)
    study(other, cards[2], None)
    browsers = {"student": student_client, "other": other, "anonymous": Client()}

    pages = {name: page(browser) for name, browser in browsers.items()}

    for name, browser in browsers.items():
        CONTENT.changed()  # nothing kept: every lesson rendered for this learner alone
        assert page(browser) == pages[name], name
    assert "1 seen · 1 rated" in lesson_item(pages["student"], cards[1])
    assert STATS not in lesson_item(pages["other"], cards[1])
    assert "1 seen · 0 rated" in lesson_item(pages["other"], cards[2])
    assert STATS not in lesson_item(pages["student"], cards[2])


def test_a_rating_in_a_kept_run_shows_at_once(clock, cards, student_client):
    Client().get("/")  # every lesson untouched: one run, kept
    assert STATS not in lesson_item(page(student_client), cards[3])

    study(student_client, cards[3], Rating.EASY)

    assert "1 seen · 1 rated" in lesson_item(page(student_client), cards[3])


def test_a_touched_lesson_is_kept_by_its_look_and_a_card_coming_due_shows_at_once(
    clock, cards, student_client, other_student
):
    other = Client()
    other.force_login(other_student)
    study(student_client, cards[2], Rating.GOT_IT)
    first = page(student_client)  # the touched lesson rendered, and kept by its look
    study(other, cards[2], Rating.GOT_IT)
    # The same look: the other learner is served the student's render, which is what a fresh
    # render gives them too.
    assert lesson_item(page(other), cards[2]) == lesson_item(first, cards[2])
    CONTENT.changed()
    assert lesson_item(page(other), cards[2]) == lesson_item(first, cards[2])
    assert "due</span>" not in lesson_item(first, cards[2])

    clock.advance(days=400)  # long past Got it's first interval: the card is due
    due = page(student_client)
    assert "1 due</a>" in lesson_item(due, cards[2]) and "due</span>" in lesson_item(due, cards[2])
    CONTENT.changed()
    assert page(student_client) == due


def test_which_card_of_a_touched_lesson_is_due_is_part_of_its_look(
    clock, cards, student_client, other_student
):
    # Two learners with one card due in the same lesson, each a different one: the same counts,
    # the same "Review here", a different list of cards.
    first = cards[2]
    second = Card.objects.get(lesson=first.lesson, step=first.step + 1)
    other = Client()
    other.force_login(other_student)
    study(student_client, first, Rating.MISSED_IT)
    study(student_client, second, Rating.EASY)
    study(other, first, Rating.EASY)
    study(other, second, Rating.MISSED_IT)
    clock.advance(hours=2)  # past Missed it's interval, well before Easy's
    mine, theirs = lesson_item(page(student_client), first), lesson_item(page(other), first)
    assert mine != theirs
    for browser, item in ((student_client, mine), (other, theirs)):
        CONTENT.changed()
        assert lesson_item(page(browser), first) == item
        assert "1 due</a>" in item

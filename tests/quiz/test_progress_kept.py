"""/progress/ is kept but for the learner's progress, rendered per request: each learner gets
the page a fresh render gives them."""

import pytest
from django.test import Client

from lessons.models import Card, Course
from pagecache.content_cache import CONTENT
from quiz.learners import Learner
from quiz.lesson_runs import ProgressRun
from quiz.models import Rating
from quiz.selectors import LessonProgress
from tests.quiz.conftest import rate
from tests.textutil import page_without_csrf_tokens

pytestmark = pytest.mark.django_db
PROGRESS = "/progress/"


def page(client: Client) -> str:
    return page_without_csrf_tokens(client, PROGRESS)


def lesson_block(html: str, card: Card) -> str:
    start = html.index(f'id="progress-lesson-{card.lesson_id}"')
    return html[start : html.index("</details>", start)]


def rate_card(client: Client, card: Card, rating: Rating) -> None:
    url = card.get_absolute_url()
    assert client.post(url + "show/", {"answer": "typed"}).status_code == 302
    assert rate(client, rating, url=url + "rate/").status_code == 200


@pytest.fixture
def two_lessons(lessons) -> tuple[Card, Card]:
    first, second = (
        Card.objects.filter(published=True, lesson__published=True)
        .order_by("lesson__order", "lesson__number", "step")
        .distinct()[index]
        for index in (0, 5)
    )
    assert first.lesson_id != second.lesson_id
    return first, second


def test_each_learner_gets_what_a_fresh_render_gives(clock, two_lessons, student_client, other_student):
    first, second = two_lessons
    other = Client()
    other.force_login(other_student)
    rate_card(student_client, first, Rating.GOT_IT)
    rate_card(other, second, Rating.MISSED_IT)
    anonymous = Client()

    pages = {
        name: page(browser)
        for name, browser in [("student", student_client), ("other", other), ("anonymous", anonymous)]
    }

    for name, browser in [("student", student_client), ("other", other), ("anonymous", anonymous)]:
        CONTENT.changed()  # nothing kept: every lesson rendered for this learner alone
        assert page(browser) == pages[name], name
    assert "Got it" in lesson_block(pages["student"], first)
    assert "Got it" not in lesson_block(pages["other"], first)
    assert "Missed it" in lesson_block(pages["other"], second)
    assert "Missed it" not in lesson_block(pages["student"], second)
    assert "Nothing rated yet" in lesson_block(pages["anonymous"], second)


def test_a_rating_in_a_kept_lesson_shows_at_once(clock, two_lessons, student_client):
    first, _ = two_lessons
    Client().get(PROGRESS)  # the untouched lesson is kept for everyone
    assert "Nothing rated yet" in lesson_block(page(student_client), first)

    rate_card(student_client, first, Rating.EASY)

    block = lesson_block(page(student_client), first)
    assert "Easy" in block and "Nothing rated yet" not in block


def test_a_rated_lessons_come_back_text_moves_with_the_clock(
    clock, two_lessons, student_client, other_student
):
    first, _ = two_lessons
    other = Client()
    other.force_login(other_student)
    rate_card(student_client, first, Rating.EASY)
    rate_card(other, first, Rating.EASY)
    mine = lesson_block(page(student_client), first)
    assert lesson_block(page(other), first) == mine
    clock.advance(days=2)  # not due yet, but it comes back two days sooner
    later = lesson_block(page(student_client), first)
    assert later != mine and "due now" not in later
    CONTENT.changed()
    assert lesson_block(page(student_client), first) == later


def test_the_sharing_choice_is_each_learners_own(student_client, other_student, lessons):
    other = Client()
    other.force_login(other_student)
    assert student_client.post("/progress/sharing/", {"share_name": "on"}).status_code == 302
    mine, theirs = page(student_client), page(other)
    assert 'id="id_share_name" checked>' in mine
    assert 'id="id_share_name">' in theirs and "checked" not in theirs
    # The box's description is on the page under the id the box names.
    assert 'aria-describedby="id_share_name_helptext"' in theirs and 'id="id_share_name_helptext"' in theirs


def test_lessons_rated_in_stand_alone_and_the_others_in_runs_every_lesson_in_order(
    clock, two_lessons, student_client
):
    _, second = two_lessons
    rate_card(student_client, second, Rating.EASY)
    lessons = [
        lesson for course in Course.objects.with_lessons_and_steps() for lesson in course.listed_lessons
    ]
    request = student_client.get(PROGRESS).wsgi_request
    progress = LessonProgress.by_lesson(Learner.of(request), lessons, clock.now())
    runs = ProgressRun.runs_of(progress[lesson.id] for lesson in lessons)

    assert [item.lesson.id for run in runs for item in run.lessons] == [lesson.id for lesson in lessons]
    rated = [run for run in runs if run.lessons[0].states]
    assert [run.lessons[0].lesson.id for run in rated] == [second.lesson_id]
    assert all(len(run.lessons) == 1 for run in rated)
    assert all(not item.states for run in runs if run not in rated for item in run.lessons)
    assert len(runs) <= 3  # the lessons before the rated one, it, the lessons after

    html = page(student_client)
    positions = [html.index(f'id="progress-lesson-{lesson.id}"') for lesson in lessons]
    assert positions == sorted(positions)

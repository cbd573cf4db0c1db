"""The lesson page is kept whole per content version (issue 23): each visitor gets what a full
render gives them, an instructor their Edit link and nobody else, and an edit shows at once."""

import pytest
from django.shortcuts import render
from django.test import Client

from lessons.views import _lesson_context
from tests.textutil import without_csrf_tokens

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("visitor", ["anonymous", "student", "instructor"])
def test_each_visitor_gets_the_page_a_full_render_gives(
    visitor, seed_card, client, student_client, instructor_client
):
    lesson = seed_card.lesson
    url = lesson.get_absolute_url()
    Client().get(url)  # kept for someone else first
    browser = {"anonymous": client, "student": student_client, "instructor": instructor_client}[visitor]

    response = browser.get(url)

    context = _lesson_context(lesson.course.slug, lesson.slug, drafts=visitor == "instructor")
    expected = render(response.wsgi_request, "lessons/lesson.html", context).content.decode()
    assert without_csrf_tokens(response.content.decode()) == without_csrf_tokens(expected)
    assert ("edit-link" in expected) == (visitor == "instructor")
    assert ("Log out" in expected) == (visitor != "anonymous")


def test_an_edited_lesson_title_shows_at_once(seed_card, client):
    lesson = seed_card.lesson
    client.get(lesson.get_absolute_url())
    lesson.title = "A title written a moment ago"
    lesson.save()
    assert "A title written a moment ago" in client.get(lesson.get_absolute_url()).content.decode()


def test_a_lesson_that_does_not_exist_is_a_404_and_is_not_kept(seed_card, client):
    assert client.get(f"/learn/{seed_card.lesson.course.slug}/no-such-lesson/").status_code == 404
    assert client.get(f"/learn/{seed_card.lesson.course.slug}/no-such-lesson/").status_code == 404


@pytest.mark.parametrize("first", ["instructor", "student"])
def test_the_edit_links_reach_instructors_only_whoever_came_first(
    first, seed_card, student_client, instructor_client
):
    pages = [
        seed_card.lesson.get_absolute_url(),
        seed_card.get_absolute_url(),
        seed_card.get_absolute_url() + "?answer=shown",
    ]
    order = (
        [instructor_client, student_client] if first == "instructor" else [student_client, instructor_client]
    )
    seen = {id(browser): [browser.get(page).content.decode() for page in pages] for browser in order}
    assert all("edit-link" in body for body in seen[id(instructor_client)])
    assert not any("edit-link" in body for body in seen[id(student_client)])

"""Drafts: students never see them; instructors preview them, clearly marked, and reach the admin."""

import pytest

from lessons.models import Card, Lesson
from quiz.models import Rating
from tests.conftest import SEED_CARD_URL
from tests.quiz.clocks import MovableClock
from tests.quiz.conftest import rate

pytestmark = pytest.mark.django_db

LESSON_URL = "/learn/llm-inference-performance/concurrency-sweep/"
BANNER = "Draft: students can't see this."


@pytest.fixture
def clock(monkeypatch) -> MovableClock:
    return MovableClock(monkeypatch)


@pytest.fixture
def draft_card(seed_card) -> Card:
    last = Card.objects.filter(lesson=seed_card.lesson).order_by("step").last()
    return Card.objects.create(
        lesson=seed_card.lesson, step=last.step + 1, title="Not ready yet", question="Where is the knee?",
        plain_words="At 8.", published=False,
    )  # fmt: skip


def previous_card(card: Card) -> Card:
    return Card.objects.filter(lesson=card.lesson, step__lt=card.step).order_by("step").last()


def make_lesson_draft(card: Card) -> None:
    Lesson.objects.filter(pk=card.lesson_id).update(published=False)


def test_students_do_not_see_a_draft_card_anywhere(client, student_client, draft_card):
    url = draft_card.get_absolute_url()
    for visitor in (client, student_client):
        assert "Not ready yet" not in visitor.get("/").content.decode()
        assert "Not ready yet" not in visitor.get(LESSON_URL).content.decode()
        assert url not in visitor.get(previous_card(draft_card).get_absolute_url()).content.decode()
        assert visitor.get(url).status_code == 404
        assert visitor.post(url + "show/", {"answer": "x"}).status_code == 404
        assert visitor.post(url + "rate/", {"rating": Rating.GOT_IT}).status_code == 404
        assert visitor.post(url + "opened/", {"layer": "deeper"}).status_code == 404


def test_students_do_not_see_a_draft_lesson_or_its_cards(client, seed_card):
    make_lesson_draft(seed_card)
    assert "Concurrency sweep" not in client.get("/").content.decode()
    assert client.get(LESSON_URL).status_code == 404
    assert client.get(SEED_CARD_URL).status_code == 404
    assert "Concurrency sweep" not in client.get("/progress/").content.decode()


def test_a_draft_leaves_progress_and_review_counts(student_client, seed_card, draft_card, clock):
    student_client.post(SEED_CARD_URL + "show/", {"answer": ""})
    rate(student_client, Rating.MISSED_IT)
    clock.advance(minutes=5)
    published = Card.objects.published().filter(lesson=seed_card.lesson).count()
    assert published == seed_card.lesson.cards.count() - 1
    assert f"1 of {published} cards rated" in student_client.get("/progress/").content.decode()
    assert "1 card due now" in student_client.get("/review/").content.decode()

    Card.objects.filter(pk=seed_card.pk).update(published=False)
    assert "Nothing is due now." in student_client.get("/review/").content.decode()
    assert student_client.get("/review/next/")["Location"] == "/review/"
    progress = student_client.get("/progress/").content.decode()
    assert f"0 of {published - 1} cards rated" in progress


def test_an_instructor_previews_a_draft_card_with_a_banner(instructor_client, draft_card):
    body = instructor_client.get(draft_card.get_absolute_url()).content.decode()
    assert BANNER in body and "Where is the knee?" in body
    assert instructor_client.post(draft_card.get_absolute_url() + "show/", {"answer": ""}).status_code == 302
    lesson_page = instructor_client.get(LESSON_URL).content.decode()
    assert "Not ready yet" in lesson_page and '<span class="draft-tag">Draft</span>' in lesson_page
    home = instructor_client.get("/").content.decode()
    assert "Not ready yet" in home and '<span class="draft-tag">Draft</span>' in home
    previous_page = instructor_client.get(previous_card(draft_card).get_absolute_url()).content.decode()
    assert f'rel="next" href="{draft_card.get_absolute_url()}"' in previous_page


def test_an_instructor_previews_a_draft_lesson_with_a_banner(instructor_client, seed_card):
    make_lesson_draft(seed_card)
    assert BANNER in instructor_client.get(LESSON_URL).content.decode()
    card_page = instructor_client.get(SEED_CARD_URL).content.decode()
    assert BANNER in card_page and "Its lesson is a draft." in card_page


def test_published_pages_carry_no_banner(instructor_client, seed_card):
    assert BANNER not in instructor_client.get(SEED_CARD_URL).content.decode()
    assert BANNER not in instructor_client.get(LESSON_URL).content.decode()


def test_a_superuser_previews_drafts_too(client, draft_card, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.org", "x"))
    assert BANNER in client.get(draft_card.get_absolute_url()).content.decode()


def test_instructors_get_edit_links_and_the_admin_in_the_nav(instructor_client, seed_card):
    card_page = instructor_client.get(SEED_CARD_URL).content.decode()
    assert f'<a class="edit-link" href="/admin/lessons/card/{seed_card.pk}/change/">Edit</a>' in card_page
    lesson_page = instructor_client.get(LESSON_URL).content.decode()
    assert (
        f'<a class="edit-link" href="/admin/lessons/lesson/{seed_card.lesson_id}/change/">Edit</a>'
        in lesson_page
    )
    assert '<a href="/admin/">Admin</a>' in card_page


def test_students_get_no_edit_links(client, student_client, seed_card):
    for visitor in (client, student_client):
        for url in (SEED_CARD_URL, LESSON_URL, "/"):
            body = visitor.get(url).content.decode()
            assert "edit-link" not in body and 'href="/admin/"' not in body


def test_after_rating_the_next_step_skips_drafts(student_client, draft_card):
    last_published = previous_card(draft_card)
    Lesson.objects.create(
        course=draft_card.lesson.course, number=99, slug="later", title="Later", published=False
    )
    url = last_published.get_absolute_url()
    student_client.post(url + "show/", {"answer": ""})
    student_client.post(url + "rate/", {"rating": Rating.GOT_IT})
    body = student_client.get(url + "?answer=shown").content.decode()
    assert "You finished Lesson 03" in body
    assert draft_card.get_absolute_url() not in body and "/learn/llm-inference-performance/later/" not in body

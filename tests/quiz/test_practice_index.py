"""/practice/: every published template by lesson with the learner's record, its problems at
/practice/SLUG/, and the first cut's addresses under the lesson redirecting there."""

import time

import pytest
from django.db import IntegrityError, transaction
from django.test import Client

from lessons.models import Lesson, PracticeTemplate
from quiz.models import PracticeState

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"
OLD = f"/learn/llm-inference-performance/kv-cache/practice/{SLUG}/"


def answer(client, seed: int, factor: float = 1.0) -> None:
    value = PracticeTemplate.objects.get(slug=SLUG).problem(seed).answer * factor
    response = client.post(
        f"/practice/{SLUG}/", {"seed": seed, "answer": f"{value}", "shown_at": time.time()}
    )
    assert response.status_code == 200


def test_the_index_lists_published_templates_by_lesson_in_course_order(client, lessons):
    page = client.get("/practice/").content.decode()
    published = PracticeTemplate.objects.published().select_related("lesson")
    for template in published:
        assert f'href="/practice/{template.slug}/"' in page, template.slug
    numbers = sorted({template.lesson.number for template in published})
    positions = [page.index(f"Lesson {number:02d} · ") for number in numbers]
    assert positions == sorted(positions)
    assert "not tried yet" in page


def test_a_draft_template_is_not_listed(client, lessons):
    PracticeTemplate.objects.filter(slug=SLUG).update(published=False)
    assert f"/practice/{SLUG}/" not in client.get("/practice/").content.decode()


def test_the_index_shows_the_learners_attempts_share_right_and_what_is_due(client, lessons, clock):
    answer(client, 1)
    answer(client, 2, factor=3)
    item = client.get("/practice/").content.decode().split(f'href="/practice/{SLUG}/"')[1].split("</li>")[0]
    assert "2 attempts, 50% right" in item and ">due<" not in item
    clock.advance(seconds=(PracticeState.objects.get().due - clock.now()).total_seconds() + 1)
    item = client.get("/practice/").content.decode().split(f'href="/practice/{SLUG}/"')[1].split("</li>")[0]
    assert ">due<" in item


def test_another_learner_sees_nothing_of_it(client, lessons):
    answer(client, 1)
    page = Client().get("/practice/").content.decode()
    assert "not tried yet" in page.split(f'href="/practice/{SLUG}/"')[1].split("</li>")[0]


def test_the_index_is_linked_from_the_nav_and_from_progress(client, lessons):
    assert 'href="/practice/"' in client.get("/").content.decode()
    progress = client.get("/progress/").content.decode().split('id="practice-progress"')[1]
    assert 'href="/practice/"' in progress


def test_a_problem_is_at_practice_slug_and_an_unknown_slug_is_a_clear_404(client, lessons):
    assert client.get(f"/practice/{SLUG}/?seed=3").status_code == 200
    missing = client.get("/practice/no-such-template/?seed=3")
    assert missing.status_code == 404 and "not found" in missing.content.decode().lower()


def test_a_bad_seed_at_the_new_address_is_a_clear_400(client, lessons):
    response = client.get(f"/practice/{SLUG}/?seed=twelve")
    assert response.status_code == 400 and "The seed must be a whole number" in response.content.decode()


def test_the_first_cuts_address_redirects_permanently_keeping_the_seed(client, lessons):
    response = client.get(f"{OLD}?seed=42")
    assert response.status_code == 301 and response["Location"] == f"/practice/{SLUG}/?seed=42"
    assert client.get(OLD)["Location"] == f"/practice/{SLUG}/"


def test_a_form_posted_to_the_first_cuts_address_keeps_its_method_and_answers(client, lessons):
    response = client.post(OLD, {"seed": 5, "answer": "1"})
    assert response.status_code == 308 and response["Location"] == f"/practice/{SLUG}/"
    assert client.post(f"{OLD}rate/", {})["Location"] == f"/practice/{SLUG}/rate/"
    followed = client.post(OLD, {"seed": 5, "answer": "1"}, follow=True)
    assert followed.status_code == 200 and "Try again (2 tries left)" in followed.content.decode()


def test_a_template_moved_to_another_lesson_keeps_its_address(client, lessons):
    template = PracticeTemplate.objects.get(slug=SLUG)
    url = template.get_absolute_url()
    template.lesson = Lesson.objects.get(slug="concurrency-sweep")
    template.save()
    assert PracticeTemplate.objects.get(slug=SLUG).get_absolute_url() == url
    assert client.get(f"{OLD}?seed=1")["Location"] == f"{url}?seed=1"


def test_two_templates_cannot_share_a_slug_even_in_different_lessons(lessons):
    template = PracticeTemplate.objects.get(slug=SLUG)
    other = Lesson.objects.exclude(pk=template.lesson_id).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        PracticeTemplate.objects.create(
            lesson=other, slug=SLUG, title="copy", question=template.question, calculator=template.calculator,
            output=template.output, draws=template.draws,
        )  # fmt: skip


def test_the_index_is_kept_per_content_version_and_reads_only_the_learners_record(client, lessons):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    Client().get("/practice/")  # builds the list, the same for everyone, once per content version
    with CaptureQueriesContext(connection) as newcomer:
        page = Client().get("/practice/").content.decode()
    # Never answered: nothing to read but the content version (in the database without Redis).
    assert len(newcomer) == 1 and "not tried yet" in page
    answer(client, 1)
    with CaptureQueriesContext(connection) as learner:
        page = client.get("/practice/").content.decode()
    reads = [query["sql"] for query in learner.captured_queries if "serving_" not in query["sql"]]
    # The session, the learner's attempts, their last few per lesson (mastery) and what is due:
    # no list of templates.
    reads = [sql for sql in reads if "django_session" not in sql]
    assert len(reads) == 3, reads
    assert all(' FROM "quiz_practice' in sql for sql in reads), reads
    assert "1 attempt, 100% right" in page.split(f'href="/practice/{SLUG}/"')[1].split("</li>")[0]


def test_a_template_unpublished_after_the_index_was_kept_leaves_it(client, lessons):
    assert f"/practice/{SLUG}/" in client.get("/practice/").content.decode()
    template = PracticeTemplate.objects.get(slug=SLUG)
    template.published = False
    template.save()
    assert f"/practice/{SLUG}/" not in client.get("/practice/").content.decode()

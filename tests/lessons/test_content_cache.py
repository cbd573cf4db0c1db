"""The card page keeps what is the same for every learner per content version (issue 14), and
no edit, however it is written, leaves a page showing what was there before."""

import io
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.autoreload import file_changed

from felab_sim.models import ParameterSet, Scenario
from lessons.models import Card, CardTerm, Lesson
from pagecache.content_cache import CONTENT
from pagecache.models import SharedVersion
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db
SHOWN = {"answer": "shown"}


def page(client) -> str:
    response = client.get(SEED_CARD_URL, SHOWN)
    assert response.status_code == 200
    return response.content.decode()


def test_the_second_visit_reads_no_content_from_the_database(client, seed_card):
    first = page(client)
    with CaptureQueriesContext(connection) as second_visit:
        second = page(client)
    assert CSRF_TOKEN.search(first)  # the rating form posts
    assert _without_due_times(second) == _without_due_times(first.replace(*_csrf_tokens(first, second)))
    content_tables = ("lessons_", "felab_sim_")
    assert not [q["sql"] for q in second_visit if any(t in q["sql"] for t in content_tables)]


CSRF_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
# Each rating button says when its rating would bring the card back, counted from the request's
# second: two visits a second apart differ there and nowhere else.
DUE_TIMES = re.compile(r'(title="Comes back |data-due=")[^"]*"')


def _without_due_times(page: str) -> str:
    return DUE_TIMES.sub(r'\1"', page)


def _csrf_tokens(first: str, second: str) -> tuple[str, str]:
    """The two pages' CSRF tokens, or two empty strings when neither has a form that posts.

    Each response masks the token anew: the only part of a kept page that may differ.
    """
    found = CSRF_TOKEN.search(first), CSRF_TOKEN.search(second)
    assert bool(found[0]) == bool(found[1]), "one page has a form the other has not"
    return (found[0][1], found[1][1]) if found[0] else ("", "")


def test_a_saved_edit_shows_at_once(client, seed_card):
    page(client)
    seed_card.picture_it = "Picture a bus that waits for every seat to fill."
    seed_card.save()
    assert "Picture a bus that waits for every seat to fill." in page(client)


def test_a_bulk_update_shows_at_once(client, seed_card):
    page(client)
    Card.objects.filter(pk=seed_card.pk).update(title="Renamed by a bulk update")
    assert "Step 1 · Renamed by a bulk update" in page(client)


def test_unpublishing_the_lesson_hides_the_kept_card_from_students(client, seed_card):
    page(client)
    Lesson.objects.filter(pk=seed_card.lesson_id).update(published=False)
    assert client.get(SEED_CARD_URL, SHOWN).status_code == 404


def test_a_glossary_edit_shows_on_the_cards_that_use_the_term(client, seed_card):
    page(client)
    term = seed_card.card_terms.first().term
    term.definition = "Rewritten by an instructor a moment ago."
    term.save()
    assert "Rewritten by an instructor a moment ago." in page(client)


def test_removing_a_word_to_know_shows_at_once(client, seed_card):
    term = seed_card.card_terms.first().term
    assert f">{term.term}</a></dt>" in page(client)
    CardTerm.objects.filter(card=seed_card, term=term).delete()
    assert f">{term.term}</a></dt>" not in page(client)


def live_panel(body: str) -> str:
    return body[body.index('id="computed-live"') : body.index("</section>", body.index('id="computed-live"'))]


def test_a_scenario_edit_changes_the_live_numbers(client, seed_card):
    before = live_panel(page(client))
    Scenario.objects.filter(pk=seed_card.scenario_id).update(slots=4)
    assert live_panel(page(client)) != before


def test_a_parameter_set_edit_changes_a_cited_number(client, seed_card):
    ceiling = ParameterSet.objects.create(
        slug="kept-ceiling", calculator="decode-ceiling", name="Ceiling", params={"model_gb": 4.9}
    )
    seed_card.picture_it = "The ceiling is {{calc.kept-ceiling.ceiling_tok_s}} tok/s."
    seed_card.save()
    assert ">111.4</span> tok/s" in page(client)
    ceiling.params = {"model_gb": 4.9, "bandwidth_gbs": 273}
    ceiling.save()
    assert ">55.7</span> tok/s" in page(client)


def test_an_edit_on_another_host_without_redis_shows_at_once(client, seed_card):
    page(client)
    # What another host's admin edit leaves in the shared database: the card, and a new content
    # version written by that host's process (no signal reaches this one).
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE lessons_card SET title = %s WHERE id = %s", ["Edited on host two", seed_card.pk]
        )
        cursor.execute("UPDATE serving_sharedversion SET token = %s WHERE name = 'content'", ["b" * 32])
    assert "Edited on host two" in page(client)


def test_an_import_shows_at_once(client, seed_card):
    Card.objects.filter(pk=seed_card.pk).update(title="Edited, then the files are imported with --force")
    assert "Edited, then the files are imported" in page(client)
    call_command("import_lessons", force=True, verbosity=0, stdout=io.StringIO())
    assert "Edited, then the files are imported" not in page(client)


def test_each_change_draws_a_new_version_and_a_lost_one_is_never_reused(seed_card):
    first = CONTENT.read()
    seed_card.save()
    second = CONTENT.read()
    assert second != first
    SharedVersion.objects.all().delete()  # lost (in Redis: evicted, or Redis restarted)
    assert CONTENT.read() not in {first, second}


def test_the_version_changes_again_when_the_edit_commits(seed_card, django_capture_on_commit_callbacks):
    # A request that read the version between the save and the commit may have kept the old
    # content under it: the commit must draw another.
    with django_capture_on_commit_callbacks(execute=True):
        seed_card.save()
        during = CONTENT.read()
    assert CONTENT.read() != during


def test_the_home_page_keeps_only_what_no_learner_has_touched(client, student_client, lessons):
    first_card = Card.objects.get(lesson__number=0, step=1)
    fresh_before = client.get("/").content.decode()
    student_client.post(first_card.get_absolute_url() + "show/", {"answer": ""})
    student_client.post(first_card.get_absolute_url() + "rate/", {"rating": 3})
    mine = student_client.get("/").content.decode()
    fresh_after = client.get("/").content.decode()
    assert "1 seen · 1 rated" in mine and 'step-state muted">rated' in mine
    assert "step-state" not in fresh_after and "seen ·" not in fresh_after
    assert fresh_after.replace(*_csrf_tokens(fresh_before, fresh_after)) == fresh_before


def test_an_instructor_sees_draft_lessons_on_the_home_page_a_student_does_not(
    client, instructor_client, lessons
):
    Lesson.objects.filter(number=5).update(published=False)
    assert 'class="draft-tag">Draft' in instructor_client.get("/").content.decode()
    student_page = client.get("/").content.decode()
    assert "Draft" not in student_page and "Lesson 05" not in student_page
    assert 'class="draft-tag">Draft' in instructor_client.get("/").content.decode()


def test_a_template_edit_under_runserver_drops_what_was_kept(client, seed_card):
    page(client)
    before = CONTENT.read()
    file_changed.send(sender=None, file_path=Path(settings.BASE_DIR / "felab_sim" / "views.py"))
    assert CONTENT.read() == before  # Python edits restart the server anyway
    file_changed.send(sender=None, file_path=Path(settings.BASE_DIR / "templates" / "lessons" / "card.html"))
    assert CONTENT.read() != before


def test_a_page_listing_every_card_reads_the_content_version_once(student_client, lessons):
    # Each card's step number students see is kept per content version; /progress/ asks for
    # all 70, and the version is one read (Redis, or the database here), not one per card.
    with CaptureQueriesContext(connection) as captured:
        assert student_client.get("/progress/").status_code == 200
    reads = [query["sql"] for query in captured.captured_queries if "serving_sharedversion" in query["sql"]]
    assert 0 < len(reads) <= 2


def test_outside_a_request_each_step_number_reads_the_version_afresh(seed_card):
    # A command or a worker has no request to end: it must see an unpublished card at once.
    second = Card.objects.get(lesson=seed_card.lesson, step=2)
    third = Card.objects.get(lesson=seed_card.lesson, step=3)
    assert third.number == 3
    second.published = False
    second.save()
    assert Card.objects.get(pk=third.pk).number == 2

import pytest
from django.contrib.auth.models import Group, Permission

from lessons.instructors import INSTRUCTORS_GROUP
from lessons.models import Card
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db


def change_url(card: Card) -> str:
    return f"/admin/lessons/card/{card.pk}/change/"


def card_form_data(card: Card, **changes) -> dict:
    data = {
        "lesson": card.lesson_id,
        "step": card.step,
        "title": card.title,
        **{name: getattr(card, name) for name in Card.TEXT_FIELDS},
        "card_terms-TOTAL_FORMS": "0",
        "card_terms-INITIAL_FORMS": "0",
        "card_terms-MIN_NUM_FORMS": "0",
        "card_terms-MAX_NUM_FORMS": "1000",
    }
    data.update(changes)
    return data


def test_migration_creates_instructors_group_with_lesson_content_permissions_only():
    group = Group.objects.get(name=INSTRUCTORS_GROUP)
    apps = set(group.permissions.values_list("content_type__app_label", flat=True))
    assert apps <= {"lessons", "felab_sim"}
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert {"add_card", "change_card", "delete_card", "change_glossaryterm", "change_lesson"} <= codenames
    assert not Permission.objects.filter(group=group, content_type__app_label="auth").exists()


def test_instructor_edits_the_seed_card_and_the_page_changes_at_once(instructor_client, client, seed_card):
    page = instructor_client.get(change_url(seed_card))
    assert page.status_code == 200
    assert "View on site" in page.content.decode()
    assert "Markdown" in page.content.decode()  # help text on the text fields

    # The glossary inline's management form carries the existing rows.
    terms = list(seed_card.card_terms.order_by("order"))
    inline = {
        "card_terms-TOTAL_FORMS": str(len(terms)),
        "card_terms-INITIAL_FORMS": str(len(terms)),
    }
    for index, card_term in enumerate(terms):
        inline.update(
            {
                f"card_terms-{index}-id": card_term.pk,
                f"card_terms-{index}-card": seed_card.pk,
                f"card_terms-{index}-term": card_term.term_id,
                f"card_terms-{index}-order": card_term.order,
            }
        )
    data = card_form_data(seed_card, plain_words="Edited by **Ines** in the admin.", **inline)
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "Edited by <strong>Ines</strong> in the admin." in body
    assert "<dt>Decode</dt>" in body


def test_instructor_cannot_manage_users(instructor_client):
    assert instructor_client.get("/admin/auth/user/").status_code == 403


def test_student_cannot_open_the_admin(student_client, seed_card):
    response = student_client.get(change_url(seed_card))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_anonymous_is_sent_to_log_in(anonymous_client, seed_card):
    assert anonymous_client.get("/admin/").status_code == 302


def test_admin_lists_search_and_filter(instructor_client, seed_card):
    assert instructor_client.get("/admin/lessons/card/", {"q": "sharing"}).status_code == 200
    lesson = instructor_client.get(f"/admin/lessons/lesson/{seed_card.lesson_id}/change/")
    assert "Concurrency sweep" in lesson.content.decode()  # cards inline

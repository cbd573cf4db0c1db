import pytest
from django.contrib.auth.models import Group, Permission

from lessons.instructors import INSTRUCTORS_GROUP
from lessons.models import Card
from tests.conftest import SEED_CARD_URL

pytestmark = pytest.mark.django_db


def change_url(card: Card) -> str:
    return f"/admin/lessons/card/{card.pk}/change/"


def card_form_data(card: Card, **changes) -> dict:
    """The card's change form as the admin would post it, with its two inlines unchanged."""
    data = {
        "lesson": card.lesson_id,
        "step": card.step,
        "title": card.title,
        "scenario": card.scenario_id or "",
        **({"published": "on"} if card.published else {}),  # a checkbox: absent means unticked
        **{name: getattr(card, name) for name in Card.TEXT_FIELDS},
    }
    for prefix, rows, fields in (
        ("card_terms", card.card_terms.order_by("order"), ("term", "order")),
        ("figures", card.figures.order_by("order"), ("order", "label", "figure", "stated")),
    ):
        rows = list(rows)
        data.update({f"{prefix}-TOTAL_FORMS": len(rows), f"{prefix}-INITIAL_FORMS": len(rows),
                     f"{prefix}-MIN_NUM_FORMS": 0, f"{prefix}-MAX_NUM_FORMS": 1000})  # fmt: skip
        for index, row in enumerate(rows):
            data[f"{prefix}-{index}-id"] = row.pk
            data[f"{prefix}-{index}-card"] = card.pk
            for field in fields:
                value = getattr(row, f"{field}_id" if field == "term" else field)
                data[f"{prefix}-{index}-{field}"] = value
    data.update(changes)
    return data


def test_migration_creates_instructors_group_with_lesson_content_permissions_only(instructors_group):
    # The group as the migrations made it, even after a transactional test's flush removed it.
    group = Group.objects.get(name=INSTRUCTORS_GROUP)
    apps = set(group.permissions.values_list("content_type__app_label", flat=True))
    assert apps <= {"lessons", "felab_sim", "quiz"}
    quiz = group.permissions.filter(content_type__app_label="quiz").values_list("codename", flat=True)
    assert all(codename.startswith("view_") for codename in quiz)  # students' records: read-only
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert {"add_card", "change_card", "delete_card", "change_glossaryterm", "change_lesson"} <= codenames
    assert not Permission.objects.filter(group=group, content_type__app_label="auth").exists()


def test_instructor_edits_the_seed_card_and_the_page_changes_at_once(instructor_client, client, seed_card):
    page = instructor_client.get(change_url(seed_card))
    assert page.status_code == 200
    assert "View on site" in page.content.decode()
    assert "Markdown" in page.content.decode()  # help text on the text fields

    data = card_form_data(seed_card, plain_words="Edited by **Ines** in the admin.")
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    body = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert "Edited by <strong>Ines</strong> in the admin." in body
    assert '#term-decode">Decode</a></dt>' in body


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


def test_unknown_live_figure_is_refused_on_save_with_a_message(instructor_client, seed_card):
    before = seed_card.plain_words
    data = card_form_data(seed_card, plain_words="Total: {{sim.c9.agg_tok_s}} tok/s.")
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200  # the form again, with the error
    assert "sim.c9.agg_tok_s: level 9 is not in the scenario&#x27;s levels" in response.content.decode()
    seed_card.refresh_from_db()
    assert seed_card.plain_words == before


def test_a_live_figure_in_a_link_target_is_refused_on_save_with_a_message(instructor_client, seed_card):
    before = seed_card.plain_words
    data = card_form_data(seed_card, plain_words="See [the total]({{sim.c8.agg_tok_s}}).")
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200
    body = response.content.decode()
    assert "{{sim.c8.agg_tok_s}} is inside a link target or an HTML attribute" in body
    assert '<ul class="errorlist' in body
    seed_card.refresh_from_db()
    assert seed_card.plain_words == before


def test_unknown_figure_in_the_live_panel_is_refused(instructor_client, seed_card):
    data = card_form_data(seed_card, **{"figures-0-figure": "c8.speed"})
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200
    assert "is not a sweep metric" in response.content.decode()


def test_live_figures_need_a_scenario(instructor_client, seed_card):
    data = card_form_data(seed_card, scenario="", **{"figures-TOTAL_FORMS": 0, "figures-INITIAL_FORMS": 0})
    data["plain_words"] = "Capacity {{sim.capacity}}."
    response = instructor_client.post(change_url(seed_card), data)
    assert "needs a scenario" in response.content.decode()


def test_instructor_edits_a_scenario_and_the_card_follows(instructor_client, client, seed_card):
    scenario = seed_card.scenario
    url = f"/admin/felab_sim/scenario/{scenario.pk}/change/"
    assert instructor_client.get(url).status_code == 200
    data = {name: getattr(scenario, name) for name in
            ("name", "slug", "description", "levels", "slots", "step_ms", "growth", "prefill_tok_s",
             "max_tokens", "slo_ms", "request_overhead_ms", "token_overhead_ms")}  # fmt: skip
    response = instructor_client.post(url, {**data, "growth": "2"})
    assert "growth must be a number at least 0 and at most 1" in response.content.decode()
    response = instructor_client.post(url, {**data, "slots": "16"})
    assert response.status_code == 302
    body = client.get(SEED_CARD_URL.replace("step-1", "step-2"), {"answer": "shown"}).content.decode()
    assert 'title="Computed live: sim.capacity">16</span>' in body

import json

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission
from django.test import Client

from accounts.instructors import INSTRUCTORS_GROUP
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
        "number_checks": json.dumps(card.number_checks),
        # The field's default is callable (list), so the admin posts its initial value too, hidden.
        "initial-number_checks": json.dumps(card.number_checks),
    }
    for prefix, rows, fields in (
        ("card_terms", card.card_terms.order_by("order"), ("term", "order")),
        ("numbers", card.numbers.order_by("order"), ("order", "label", "live", "stated")),
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
    # Students' records are read-only; the mistakes instructors name from the class's answers
    # are content they write.
    assert all(codename.startswith("view_") or codename.endswith("_classmistake") for codename in quiz)
    assert {f"{action}_classmistake" for action in ("add", "change", "delete", "view")} <= set(quiz)
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


def test_unknown_live_number_is_refused_on_save_with_a_message(instructor_client, seed_card):
    before = seed_card.plain_words
    data = card_form_data(seed_card, plain_words="Total: {{sim.c9.agg_tok_s}} tok/s.")
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200  # the form again, with the error
    assert "sim.c9.agg_tok_s: level 9 is not in the scenario&#x27;s levels" in response.content.decode()
    seed_card.refresh_from_db()
    assert seed_card.plain_words == before


@pytest.mark.parametrize(
    "text, reason",
    [
        ("Total: {\\{sim.unknown}} tok/s.", "sim.unknown: "),
        ("Total: {{sim.c9\\.agg_tok_s}} tok/s.", "sim.c9.agg_tok_s: level 9"),
        ("Cost: {\\{calc.no-such-set.usd}}.", "calc.no-such-set.usd"),
    ],
)
def test_a_live_number_written_with_an_escaped_brace_is_checked_as_the_page_shows_it(
    instructor_client, seed_card, text, reason
):
    # Markdown drops the backslash, so the page would fill a placeholder the raw text hides.
    before = seed_card.plain_words
    response = instructor_client.post(change_url(seed_card), card_form_data(seed_card, plain_words=text))
    assert response.status_code == 200
    assert reason in response.content.decode()
    seed_card.refresh_from_db()
    assert seed_card.plain_words == before


def test_a_live_number_in_a_link_target_is_refused_on_save_with_a_message(instructor_client, seed_card):
    before = seed_card.plain_words
    data = card_form_data(seed_card, plain_words="See [the total]({{sim.c8.agg_tok_s}}).")
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200
    body = response.content.decode()
    assert "{{sim.c8.agg_tok_s}} is inside a link target or an HTML attribute" in body
    assert '<ul class="errorlist' in body
    seed_card.refresh_from_db()
    assert seed_card.plain_words == before


def test_unknown_live_number_in_the_live_panel_is_refused(instructor_client, seed_card):
    data = card_form_data(seed_card, **{"numbers-0-live": "c8.speed"})
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200
    assert "is not a sweep metric" in response.content.decode()


def test_live_numbers_need_a_scenario(instructor_client, seed_card):
    data = card_form_data(seed_card, scenario="", **{"numbers-TOTAL_FORMS": 0, "numbers-INITIAL_FORMS": 0})
    data["plain_words"] = "Capacity {{sim.capacity}}."
    response = instructor_client.post(change_url(seed_card), data)
    assert "needs a scenario" in response.content.decode()


def test_an_unknown_live_number_on_a_card_without_a_scenario_is_named(instructor_client, seed_card):
    data = card_form_data(seed_card, scenario="", **{"numbers-TOTAL_FORMS": 0, "numbers-INITIAL_FORMS": 0})
    data["plain_words"] = "Capacity {{sim.capasity}}."
    body = instructor_client.post(change_url(seed_card), data).content.decode()
    assert "sim.capasity: not a known live number" in body
    assert "needs a scenario" not in body


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


def as_a_browser_sends_it(data: dict) -> dict:
    """A browser sends every text area's line breaks as \r\n (the HTML standard's form encoding)."""
    return {
        key: value.replace("\n", "\r\n") if isinstance(value, str) else value for key, value in data.items()
    }


def test_a_form_sent_with_crlf_saves_plain_line_breaks_and_logs_only_the_edited_field(
    instructor_client, lessons
):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=2)
    assert "\n" in card.real_numbers
    data = as_a_browser_sends_it(card_form_data(card, plain_words="Edited in the admin."))
    assert instructor_client.post(change_url(card), data).status_code == 302
    card.refresh_from_db()
    assert "\r" not in card.real_numbers and card.plain_words == "Edited in the admin."
    entry = LogEntry.objects.get(object_id=str(card.pk))
    assert entry.get_change_message() == "Changed In plain words."


def test_saving_a_lesson_leaves_its_untouched_inline_cards_unsaved(instructor_client, seed_card):
    lesson = seed_card.lesson
    cards = list(lesson.cards.order_by("step"))
    saved_at = {card.pk: card.updated_at for card in cards}
    data = {"course": lesson.course_id, "number": lesson.number, "title": "Sweeping", "slug": lesson.slug,
            "order": lesson.order, "intro": lesson.intro, "minutes": lesson.minutes or "", "published": "on",
            "cards-TOTAL_FORMS": len(cards), "cards-INITIAL_FORMS": len(cards),
            "cards-MIN_NUM_FORMS": 0, "cards-MAX_NUM_FORMS": 1000}  # fmt: skip
    for index, card in enumerate(cards):
        data.update({f"cards-{index}-id": card.pk, f"cards-{index}-lesson": lesson.pk,
                     f"cards-{index}-step": card.step, f"cards-{index}-title": card.title,
                     f"cards-{index}-question": card.question + "\n\nA second paragraph."})  # fmt: skip
        card.question += "\n\nA second paragraph."
        card.save()
        saved_at[card.pk] = card.updated_at
        if card.published:
            data[f"cards-{index}-published"] = "on"
    response = instructor_client.post(
        f"/admin/lessons/lesson/{lesson.pk}/change/", as_a_browser_sends_it(data)
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert dict(lesson.cards.values_list("pk", "updated_at")) == saved_at


def preview_url(card: Card) -> str:
    return f"/admin/lessons/card/{card.pk}/preview/"


def test_the_change_form_has_a_preview_button_that_opens_a_new_tab(instructor_client, seed_card):
    body = instructor_client.get(change_url(seed_card)).content.decode()
    assert f'formaction="{preview_url(seed_card)}" formtarget="_blank"' in body


def test_preview_shows_the_unsaved_form_as_students_will_see_it(instructor_client, client, lessons):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=2)
    saved = (card.question, card.updated_at, LogEntry.objects.count())
    data = card_form_data(
        card,
        question="How many at once, if **{{sim.capacity}}** is the knee?",
        plain_words="Divide by {{sim.capacity}}.",
        **{"numbers-0-stated": "9", "numbers-1-DELETE": "on"},
    )
    response = instructor_client.post(preview_url(card), as_a_browser_sends_it(data))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Preview: not saved." in body
    assert (
        'How many at once, if <strong><span class="live-number" title="Computed live: sim.capacity">8</span></strong>'
        in body
    )
    assert "Divide by <span" in body  # the answer is shown
    assert "<td>9</td>" in body  # the Computed live panel as the form holds it
    assert "TTFT p95, 8 people (ms)" not in body  # the row marked for deletion
    assert "Time to first token (TTFT)" in body  # words to know
    card.refresh_from_db()
    assert (card.question, card.updated_at, LogEntry.objects.count()) == saved
    assert card.numbers.get(order=1).stated == "8"
    assert card.numbers.count() == 5
    # What students get is still the saved card, kept page or not.
    student_page = client.get(card.get_absolute_url()).content.decode()
    assert "How many at once" not in student_page and "Preview: not saved." not in student_page


def test_preview_lists_what_save_would_refuse(instructor_client, seed_card):
    data = card_form_data(
        seed_card, plain_words="Total: {{sim.c9.agg_tok_s}} tok/s.", **{"numbers-0-live": "c8.speed"}
    )
    response = instructor_client.post(preview_url(seed_card), data)
    body = response.content.decode()
    assert "Fix these in the form, then press Preview again. Nothing was saved." in body
    assert (
        "<strong>In plain words:</strong> sim.c9.agg_tok_s: level 9 is not in the scenario&#x27;s levels"
        in body
    )
    assert "<strong>Live number:</strong> sim.c8.speed: &#x27;speed&#x27; is not a sweep metric" in body


def test_preview_is_a_post_for_staff_with_a_csrf_token(
    instructor, student_client, anonymous_client, seed_card
):
    data = card_form_data(seed_card, question="Changed?")
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(instructor)
    assert checked.post(preview_url(seed_card), data).status_code == 403
    assert checked.get(preview_url(seed_card)).status_code == 405
    for outsider in (student_client, anonymous_client):
        response = outsider.post(preview_url(seed_card), data)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_preview_of_a_card_not_saved_yet(instructor_client, seed_card):
    assert (
        'formaction="/admin/lessons/card/add/preview/"'
        in instructor_client.get("/admin/lessons/card/add/").content.decode()
    )
    count = Card.objects.count()
    data = {"lesson": seed_card.lesson_id, "step": 99, "title": "A new one", "published": "on",
            "scenario": seed_card.scenario_id, "question": "Seats: {{sim.slots}}?", "plain_words": "Eight.",
            **{name: "" for name in Card.TEXT_FIELDS if name not in ("question", "plain_words")},
            "card_terms-TOTAL_FORMS": 1, "card_terms-INITIAL_FORMS": 0, "card_terms-0-order": 1,
            "card_terms-0-term": seed_card.card_terms.order_by("order").first().term_id,
            "numbers-TOTAL_FORMS": 0, "numbers-INITIAL_FORMS": 0}  # fmt: skip
    response = instructor_client.post("/admin/lessons/card/add/preview/", data)
    assert response.status_code == 200, response.content.decode()[:3000]
    body = response.content.decode()
    # Numbered as students will see it: after the lesson's 3 published cards, whatever its step.
    assert "Step 4 · A new one" in body and "Preview: not saved." in body
    assert 'Seats: <span class="live-number" title="Computed live: sim.slots">8</span>?' in body
    assert '#term-decode">Decode</a></dt>' in body
    assert body.count('name="rating"') == 4  # what a first-time student sees
    assert Card.objects.count() == count


def _messages(response) -> list[tuple[str, str]]:
    return [(message.level_tag, message.message) for message in response.context["messages"]]


def test_a_number_the_text_works_out_unchecked_is_saved_with_a_warning(instructor_client, seed_card):
    plain = "One fetch serves all 8 people, so the server does about 7 times the work."
    data = card_form_data(seed_card, plain_words=plain)
    response = instructor_client.post(change_url(seed_card), data, follow=True)
    seed_card.refresh_from_db()
    assert seed_card.plain_words == plain  # a warning, never a refusal
    warnings = [text for level, text in _messages(response) if level == "warning"]
    assert len(warnings) == 1
    assert "1 number in this card's text is worked out but not checked" in warnings[0]
    assert "plain_words: 7 (N times)" in warnings[0]
    # The change form lists it too, for whoever opens the card next.
    page = instructor_client.get(change_url(seed_card)).content.decode()
    assert '<ul class="unchecked-numbers"><li>plain_words: 7 (N times)' in page


def test_a_declared_check_silences_the_warning_and_a_wrong_one_is_named(instructor_client, seed_card):
    plain = "One fetch serves all 8 people, so the server does about 5 times the work."
    for expr, warned in (("275.1 / 54.1", False), ("275.1 / 38.9", True)):
        checks = [*seed_card.number_checks, {"number": "5", "expr": expr}]
        data = card_form_data(seed_card, plain_words=plain, number_checks=json.dumps(checks))
        response = instructor_client.post(change_url(seed_card), data, follow=True)
        seed_card.refresh_from_db()
        assert seed_card.number_checks == checks
        warnings = [text for level, text in _messages(response) if level == "warning"]
        assert bool(warnings) is warned, warnings
        if warned:
            assert "check 5: 275.1 / 38.9 is 7.07198, not 5" in warnings[0]


def test_a_list_of_checks_that_cannot_be_read_is_refused(instructor_client, seed_card):
    data = card_form_data(seed_card, number_checks=json.dumps([{"number": "5"}]))
    response = instructor_client.post(change_url(seed_card), data)
    assert response.status_code == 200  # the form again, with the error
    assert "give an expr to work it out from, or the source it is quoted from" in response.content.decode()

"""An instructor in Chromium edits every kind of content the Instructors group may change.

For each model the group may change: its list, an object's change page (every field and
inline there, Save visible, no console error, no failed request), an edit saved and then
seen where students see it; and its add page. A model the group gains later is picked up
from the group's permissions: the test fails until STUDENT_VIEWS says where students see it.
"""

import difflib
import io
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db.models import Model
from django.test import RequestFactory
from django.utils.html import strip_tags
from playwright.sync_api import Browser, BrowserContext, Page, Response, expect

from felab_sim.models import ParameterSet, Scenario
from lessons.content_format import CONTENT_DIR
from lessons.models import Card, Course, GlossaryTerm, Lesson, PracticeTemplate
from quiz.models import ClassMistake
from tests.browser.conftest import new_page
from tests.conftest import PASSWORD

TIMEOUT_MS = 30_000  # generous: the machine is shared


@dataclass(frozen=True)
class StudentView:
    """The object the test opens, the field it changes, and the page where a student then reads it."""

    pick: Callable[[], Model]
    field: str
    url: Callable[[Model], str]
    # What the test types; None: a sentence naming the model. What the student page must then
    # contain; None: what was typed.
    value: str | None = None
    shows: Callable[[Model], str] | None = None
    # What the student types into the practice page's answer box first, where the edit shows
    # only once answered (a mistake's sentence); None: nothing.
    answer: Callable[[Model], str] | None = None


def _answer_shown(card: Card) -> str:
    return card.get_absolute_url() + "?answer=shown"


def _published_card_citing(text: str) -> Card:
    return Card.objects.published().filter(question__contains=text).get()


def _cited_number_text(parameter_set: ParameterSet) -> str:
    card = _published_card_citing(f"{{{{calc.{parameter_set.slug}.")
    return strip_tags(card.html["question"])


STUDENT_VIEWS: dict[type[Model], StudentView] = {
    Card: StudentView(
        lambda: Card.objects.published().order_by("lesson__number", "step").first(),
        "question",
        lambda card: card.get_absolute_url(),
    ),
    Lesson: StudentView(
        lambda: Lesson.objects.published().first(), "title", lambda lesson: lesson.get_absolute_url()
    ),
    Course: StudentView(lambda: Course.objects.first(), "title", lambda course: "/"),
    GlossaryTerm: StudentView(
        lambda: GlossaryTerm.objects.filter(cards__in=Card.objects.published()).first(),
        "definition",
        lambda term: _answer_shown(term.cards.published().first()),
    ),
    # The card's Computed live panel names its scenario.
    Scenario: StudentView(
        lambda: Scenario.objects.filter(cards__in=Card.objects.published()).first(),
        "name",
        lambda scenario: _answer_shown(scenario.cards.published().first()),
    ),
    # A parameter set shows through the numbers cards cite from it: change a parameter, the number moves.
    ParameterSet: StudentView(
        lambda: ParameterSet.objects.get(slug=CITED_SET),
        "bandwidth_gbs",
        lambda parameter_set: _published_card_citing(f"{{{{calc.{parameter_set.slug}.").get_absolute_url(),
        value="273",
        shows=_cited_number_text,
    ),
    # A practice template's title heads each problem it draws.
    PracticeTemplate: StudentView(
        lambda: PracticeTemplate.objects.published().order_by("lesson__number", "order").first(),
        "title",
        lambda template: f"{template.get_absolute_url()}?seed=1",
    ),
    # A mistake named from the class's answers: its sentence, read by a student who makes it.
    ClassMistake: StudentView(
        lambda: ClassMistake.objects.get_or_create(
            template=PracticeTemplate.objects.get(slug="l01-ttft-long-prompt"),
            slug="twice",
            defaults={"says": "Twice the time.", "formula": "answer * 2"},
        )[0],
        "says",
        lambda mistake: f"{mistake.template.get_absolute_url()}?seed=7",
        answer=lambda mistake: f"{mistake.template.problem(7).answer * 2:.6g} ms",
    ),
}
CITED_SET = "test-browser-ceiling"


@pytest.fixture
def cited_parameter_set(lessons) -> ParameterSet:
    """The bundled content may hold no parameter set yet: one, and a card citing it."""
    parameter_set = ParameterSet.objects.create(
        slug=CITED_SET, calculator="decode-ceiling", name="M4 Max, 8B"
    )
    lesson = Lesson.objects.published().first()
    last = lesson.cards.order_by("step").last()
    Card.objects.create(
        lesson=lesson, step=last.step + 1, title="The ceiling", plain_words="Bandwidth over bytes per token.",
        question=f"Why is {{{{calc.{CITED_SET}.ceiling_tok_s}}}} tok/s the most this machine can decode?",
    )  # fmt: skip
    return parameter_set


class BrowserLog:
    """Console errors, uncaught exceptions and failed requests, from every page of a context."""

    def __init__(self, context: BrowserContext) -> None:
        self.problems: list[str] = []
        context.on("page", self.watch)

    def watch(self, page: Page) -> None:
        page.on(
            "console", lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None
        )
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("response", self._response)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.problems.append(f"{response.status} {response.url}")

    def take(self) -> list[str]:
        problems, self.problems = self.problems, []
        return problems


@pytest.fixture
def instructor_page(
    browser: Browser, live_lessons: str, instructor: User
) -> Iterator[tuple[Page, BrowserLog]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    log = BrowserLog(context)
    page = context.new_page()
    page.goto(live_lessons + "/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(instructor.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
    yield page, log
    context.close()


@pytest.fixture
def student_page(browser: Browser) -> Page:
    return new_page(browser, timeout_ms=TIMEOUT_MS)


def models_instructors_may_change(group: Group) -> set[type[Model]]:
    permissions = group.permissions.filter(codename__startswith="change_").select_related("content_type")
    return {permission.content_type.model_class() for permission in permissions}


def _admin_request(user: User):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def form_field_names(model_admin: admin.ModelAdmin, request, obj: Model | None) -> list[str]:
    names = []
    for _, options in model_admin.get_fieldsets(request, obj):
        for line in options["fields"]:
            names.extend(line if isinstance(line, list | tuple) else [line])
    return names


def check_form_page(page: Page, model_admin: admin.ModelAdmin, request, obj: Model | None) -> list[str]:
    """Every field row and inline group of the admin's form is on the page, and Save is visible."""
    missing = []
    for name in form_field_names(model_admin, request, obj):
        row = page.locator(f".form-row.field-{name}")
        if row.count() == 0 or not row.first.is_visible():
            missing.append(f"field {name}")
    for inline in model_admin.get_inline_instances(request, obj):
        prefix = inline.get_formset(request, obj).get_default_prefix()
        group = page.locator(f"#{prefix}-group")
        if group.count() == 0 or not group.is_visible():
            missing.append(f"inline {prefix}")
            continue
        for name in inline.get_fields(request, obj):
            if group.locator(f".field-{name}").count() == 0:
                missing.append(f"inline {prefix} field {name}")
    save = page.locator('input[name="_save"]')
    if save.count() == 0 or not save.is_visible():
        missing.append("Save button")
    return missing


def test_an_instructor_edits_every_kind_of_content_in_chromium(
    instructor_page: tuple[Page, BrowserLog],
    student_page: Page,
    live_lessons: str,
    instructor: User,
    cited_parameter_set: ParameterSet,
):
    page, log = instructor_page
    request = _admin_request(instructor)
    group = instructor.groups.get()
    changeable = models_instructors_may_change(group)
    registry = admin.site._registry
    inline_models = {inline.model for model_admin in registry.values() for inline in model_admin.inlines}

    # Every model the group may change has a page of its own or is an inline of one.
    assert not {m._meta.label for m in changeable - registry.keys() - inline_models}
    edited = sorted(changeable & registry.keys(), key=lambda m: m._meta.label)
    assert not [m._meta.label for m in edited if m not in STUDENT_VIEWS], "say where students see it"
    assert {Card, Lesson, Course, GlossaryTerm, Scenario, ParameterSet} <= set(edited)

    problems: dict[str, list[str]] = {}
    for model in edited:
        model_admin = registry[model]
        opts = model._meta
        view = STUDENT_VIEWS[model]
        obj = view.pick()
        seen: list[str] = []
        # A student reads the page first, so the site keeps it (pagecache/content_cache.py): the
        # edit below must still show on the student's next visit.
        student_page.goto(live_lessons + view.url(obj))

        page.goto(f"{live_lessons}/admin/{opts.app_label}/{opts.model_name}/")
        expect(page.locator("#result_list")).to_be_visible()
        page.locator(f'#result_list a[href$="/{opts.model_name}/{obj.pk}/change/"]').first.click()
        page.wait_for_url(re.compile(rf"/{obj.pk}/change/$"))
        seen += check_form_page(page, model_admin, request, obj)
        if seen:  # a broken form cannot be saved: report it with the others' problems
            problems[opts.label] = seen + log.take()
            continue

        typed = view.value or f"Edited {opts.model_name} {view.field} in Chromium"
        page.locator(f"#id_{view.field}").fill(typed)
        page.locator('input[name="_save"]').click()
        expect(page.locator(".messagelist .success")).to_be_visible()
        obj.refresh_from_db()
        student_page.goto(live_lessons + view.url(obj))
        if view.answer is not None:
            student_page.locator("#practice-answer").fill(view.answer(obj))
            student_page.locator("#practice-answer").press("Enter")
        expect(student_page.locator("main")).to_contain_text(view.shows(obj) if view.shows else typed)

        page.goto(f"{live_lessons}/admin/{opts.app_label}/{opts.model_name}/add/")
        seen += [f"add page: {problem}" for problem in check_form_page(page, model_admin, request, None)]
        seen += log.take()
        if seen:
            problems[opts.label] = seen
    assert problems == {}

    # The way back to the site, and the site's icon on the admin (no request for a missing one).
    page.goto(live_lessons + "/admin/")
    icon = page.locator('link[rel="icon"]')
    expect(icon).to_have_attribute("href", re.compile(r"favicon\.svg$"))
    assert page.request.get(live_lessons + icon.get_attribute("href")).status == 200
    page.get_by_role("link", name="View site").click()
    page.wait_for_url(live_lessons + "/")
    expect(page.get_by_role("navigation", name="Site").get_by_role("link", name="Admin")).to_be_visible()
    assert log.take() == []


def test_an_instructor_previews_a_draft_publishes_it_and_then_students_see_it(
    instructor_page: tuple[Page, BrowserLog], student_page: Page, live_lessons: str
):
    page, log = instructor_page
    lesson = Lesson.objects.get(slug="concurrency-sweep")
    last = lesson.cards.order_by("step").last()
    draft = Card.objects.create(
        lesson=lesson, step=last.step + 1, title="The queue", question="What happens at 9 people?",
        plain_words="The ninth waits.", published=False,
    )  # fmt: skip
    url = live_lessons + draft.get_absolute_url()

    assert student_page.goto(url).status == 404
    student_page.goto(live_lessons + lesson.get_absolute_url())
    expect(student_page.get_by_text("The queue")).to_have_count(0)

    page.goto(url)
    expect(page.locator(".draft-banner")).to_contain_text("Draft: students can't see this.")
    expect(page.locator(".question-text")).to_have_text("What happens at 9 people?")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(re.compile(rf"/admin/lessons/card/{draft.pk}/change/$"))
    page.get_by_label("Published").check()
    page.locator('input[name="_save"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()

    assert student_page.goto(url).status == 200
    expect(student_page.locator(".question-text")).to_have_text("What happens at 9 people?")
    expect(student_page.locator(".draft-banner")).to_have_count(0)
    student_page.goto(live_lessons + lesson.get_absolute_url())
    published = Card.objects.get(pk=draft.pk)
    assert published.label == f"Step {lesson.cards.count()} · The queue"
    expect(student_page.get_by_role("link", name=published.label)).to_be_visible()
    page.goto(url)
    expect(page.locator(".draft-banner")).to_have_count(0)
    assert log.take() == []


def test_an_admin_edit_survives_the_import_that_make_run_does(
    instructor_page: tuple[Page, BrowserLog], student_page: Page, live_lessons: str, seed_card: Card
):
    page, log = instructor_page
    page.goto(live_lessons + seed_card.get_absolute_url())
    page.get_by_role("link", name="Edit", exact=True).click()
    page.locator("#id_plain_words").fill("Ines rewrote this in the admin.")
    page.locator('input[name="_save"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()

    # What `make run` and `make serve` do at every start.
    out = io.StringIO()
    call_command("import_lessons", stdout=out)
    assert "field 'plain_words'" in out.getvalue()  # reported, not written

    student_page.goto(live_lessons + seed_card.get_absolute_url() + "?answer=shown")
    expect(student_page.locator(".plain-words")).to_contain_text("Ines rewrote this in the admin.")
    assert log.take() == []


def _changed_lines(before: Path, after: Path) -> list[str]:
    """Every line a text diff of two content folders adds or removes, with its file's name."""
    changed = []
    for old in sorted(before.rglob("*.yaml")):
        new = after / old.relative_to(before)
        diff = difflib.unified_diff(
            old.read_text().splitlines(), new.read_text().splitlines(), n=0, lineterm=""
        )
        changed += [
            f"{old.name}: {line}" for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")
        ]
    return changed


def test_an_admin_edit_round_trips_to_the_files_as_a_small_diff(
    instructor_page: tuple[Page, BrowserLog], live_lessons: str, tmp_path: Path
):
    page, log = instructor_page
    edited, hidden = Card.objects.filter(lesson__slug="concurrency-sweep", step__in=(2, 3)).order_by("step")
    assert "far inside the" in edited.real_numbers and "\n" in edited.real_numbers

    # Typed into the text area, so the browser sends the whole form the way it does: \r\n line breaks.
    page.goto(f"{live_lessons}/admin/lessons/card/{edited.pk}/change/")
    area = page.locator("#id_real_numbers")
    area.evaluate(
        "(el, words) => { const at = el.value.indexOf(words); el.focus(); el.setSelectionRange(at, at + words.length); }",
        "far inside",
    )
    page.keyboard.type("well inside")
    page.locator('input[name="_save"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()
    page.goto(f"{live_lessons}/admin/lessons/card/{hidden.pk}/change/")
    page.get_by_label("Published").uncheck()
    page.locator('input[name="_save"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()

    edited.refresh_from_db()
    assert "well inside the" in edited.real_numbers and "\r" not in edited.real_numbers
    assert not Card.objects.filter(published=False).exclude(pk=hidden.pk).exists()

    # What `make run` does next: only the two real edits are reported, the paragraph as a short diff.
    out = io.StringIO()
    call_command("import_lessons", stdout=out)
    report = out.getvalue()
    assert "2 conflicts" in report, report
    lesson = "card llm-inference-performance/concurrency-sweep"
    assert f"conflict: {lesson}/2, field 'real_numbers'" in report
    assert f"conflict: {lesson}/3, field 'published'" in report
    assert "  - file:     …" in report and "far inside the" in report
    assert "  + database: …" in report and "well inside the" in report
    assert len(report) < 2_000, report  # not whole texts

    # export_lessons into a copy of the files: the diff is the edited line and the draft flag.
    copy = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, copy)
    call_command("export_lessons", "--dir", str(copy), stdout=io.StringIO())
    changed = _changed_lines(CONTENT_DIR, copy)
    name = "lesson-03-concurrency-sweep.yaml"
    [line] = [
        line
        for line in (copy / "llm-inference-performance" / name).read_text().splitlines()
        if "well inside" in line
    ]
    assert changed == [
        f"{name}: -{line.replace('well inside', 'far inside')}",
        f"{name}: +{line}",
        f"{name}: +  published: false",
    ], changed
    assert log.take() == []


def test_an_instructor_previews_unsaved_text_as_students_will_see_it_without_javascript(
    browser: Browser, live_lessons: str, instructor: User
):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=2)
    saved = (card.question, card.updated_at)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    log = BrowserLog(context)
    page = context.new_page()
    page.goto(live_lessons + "/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(instructor.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    change = f"{live_lessons}/admin/lessons/card/{card.pk}/change/"
    page.goto(change)
    question = page.locator("#id_question")
    question.fill("")
    question.press_sequentially("With **{{sim.capacity}}** seats,\nhow many servers for 120 people?")

    with context.expect_page() as opened:
        page.get_by_role("button", name="Preview").click()
    preview = opened.value
    preview.wait_for_load_state()
    expect(preview.locator(".preview-banner")).to_contain_text("Preview: not saved.")
    expect(preview.locator(".question-text")).to_have_text("With 8 seats,\nhow many servers for 120 people?")
    expect(preview.locator(".question-text strong .live-number")).to_have_text("8")
    expect(preview.locator(".plain-words")).to_contain_text(strip_tags(card.html["plain_words"])[:40])
    expect(preview.locator(".live-table")).to_contain_text("Servers for 120 people")
    expect(preview.locator(".live-value").first).to_have_text("8")
    expect(preview.locator('.plot[data-figure="card-live-figure"] svg').first).to_be_visible()

    # The form's tab is still the form, with what was typed, and nothing was saved.
    assert page.url == change
    expect(question).to_have_value("With **{{sim.capacity}}** seats,\nhow many servers for 120 people?")
    card.refresh_from_db()
    assert (card.question, card.updated_at) == saved
    assert log.take() == []
    context.close()


def test_an_instructor_is_warned_of_an_unchecked_number_and_checks_it(
    instructor_page: tuple[Page, BrowserLog], seed_card: Card, live_lessons: str
):
    page, log = instructor_page
    change = f"{live_lessons}/admin/lessons/card/{seed_card.pk}/change/"
    page.goto(change)
    expect(page.locator(".field-numbers_to_check")).to_contain_text(
        "Every number the text works out is live or checked."
    )
    page.locator("#id_plain_words").fill("Eight people together get about 6 times the tokens one gets alone.")
    page.locator('input[name="_continue"]').click()
    # Saved, and warned: a warning, never a refusal.
    expect(page.locator(".messagelist .success")).to_be_visible()
    warning = page.locator(".messagelist .warning")
    expect(warning).to_contain_text("1 number in this card's text is worked out but not checked")
    expect(warning).to_contain_text("plain_words: 6 (N times)")
    expect(page.locator(".field-numbers_to_check li")).to_have_count(1)
    seed_card.refresh_from_db()
    assert seed_card.plain_words.startswith("Eight people together")

    checks = [*seed_card.number_checks, {"number": "6", "expr": "8 * 38.9 / 54.9"}]
    page.locator("#id_number_checks").fill(json.dumps(checks))
    page.locator('input[name="_continue"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()
    expect(page.locator(".messagelist .warning")).to_have_count(0)
    expect(page.locator(".field-numbers_to_check")).to_contain_text(
        "Every number the text works out is live or checked."
    )
    assert log.take() == []


def test_an_instructor_saves_a_source_note_longer_than_300_characters_and_students_read_it_whole(
    instructor_page: tuple[Page, BrowserLog], student_page: Page, live_lessons: str
):
    """Lesson 14's measured runs cite repository, files, run and licence: 481 characters, which a
    300-character column refused on PostgreSQL. The admin's box takes a long note and keeps it."""
    page, log = instructor_page
    card = Card.objects.published().order_by("lesson__number", "step").first()
    note = "measured: " + "; ".join(
        f"run {n} on the course's own machine, its files and licence" for n in range(8)
    )
    assert len(note) > 300
    page.goto(f"{live_lessons}/admin/lessons/card/{card.pk}/change/")
    source = page.locator("#id_real_numbers_source")
    expect(source).to_be_visible()
    source.fill(note)
    page.locator('input[name="_save"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()
    card.refresh_from_db()
    assert card.real_numbers_source == note
    student_page.goto(live_lessons + _answer_shown(card))
    shown = student_page.get_by_role("region", name="With real numbers").locator(".source-note")
    expect(shown).to_contain_text(note)
    assert log.take() == []

"""Practice problems in Chromium: a student solves one (wrong, then right, then another), and an
instructor saves a template and sees another refused with its reason."""

from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from lessons.models import Lesson, PracticeTemplate
from tests.conftest import PASSWORD

pytestmark = pytest.mark.browser

SLUG = "l05-kv-per-conversation"
TIMEOUT_MS = 30_000


def problem_url(base: str, seed: int) -> str:
    return f"{base}{PracticeTemplate.objects.get(slug=SLUG).get_absolute_url()}?seed={seed}"


def expected(seed: int) -> float:
    return PracticeTemplate.objects.get(slug=SLUG).problem(seed).answer


@pytest.fixture(params=["htmx", "no-javascript"])
def student(request, browser: Browser) -> Iterator[Page]:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, java_script_enabled=request.param == "htmx"
    )
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()


def test_a_student_answers_wrong_then_right_then_takes_another(student: Page, live_lessons):
    student.goto(problem_url(live_lessons, 7))
    box = student.get_by_label("Your answer", exact=False)
    box.fill("12 ms")
    box.press("Enter")
    expect(student.get_by_role("alert")).to_contain_text("is not the kind of unit this answer is in")
    expect(student.get_by_role("alert")).to_contain_text("Not counted.")

    student.get_by_label("Your answer", exact=False).fill(f"{expected(7) * 3:.4f} GB")
    student.get_by_label("Your answer", exact=False).press("Enter")
    expect(student.get_by_role("heading", name="Off: 3× too high")).to_be_visible()
    expect(student.get_by_role("heading", name="Worked solution")).to_be_visible()
    expect(student.get_by_text("Proposed from your error: Missed it")).to_be_visible()

    student.goto(problem_url(live_lessons, 8))
    megabytes = f"{expected(8) * 1000:,.0f} MB"
    student.get_by_label("Your answer", exact=False).fill(megabytes)
    student.get_by_label("Your answer", exact=False).press("Enter")
    expect(student.get_by_role("heading", name="Right", exact=False)).to_be_visible()
    expect(student.get_by_text(f"{megabytes} =")).to_be_visible()
    calculator_link = student.get_by_role("link", name="at these settings", exact=False)
    assert "/sim/calc/kv-cache/?" in calculator_link.get_attribute("href")
    # No sideways scroll on a phone.
    assert student.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    before = student.url
    student.get_by_role("link", name="Another one like this").click()
    expect(student.get_by_label("Your answer", exact=False)).to_be_visible()
    assert "seed=" in student.url and student.url != before


def test_n_opens_another_problem_once_answered(browser: Browser, live_lessons):
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(problem_url(live_lessons, 9))
    page.get_by_label("Your answer", exact=False).fill(f"{expected(9)}")
    page.get_by_label("Your answer", exact=False).press("Enter")
    expect(page.get_by_role("heading", name="Right", exact=False)).to_be_visible()
    page.locator("body").press("n")
    # The new seed is random: "seed=9" would also match a new seed 9123, so compare it whole.
    page.wait_for_url(lambda url: parse_qs(urlsplit(url).query).get("seed") not in (None, ["9"]))
    expect(page.get_by_label("Your answer", exact=False)).to_be_visible()
    context.close()


def test_an_instructor_saves_a_template_and_one_is_refused_with_its_reason(
    browser: Browser, live_lessons, instructor: User
):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto(live_lessons + "/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(instructor.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    lesson = Lesson.objects.get(slug="kv-cache")
    page.goto(live_lessons + "/admin/lessons/practicetemplate/add/")
    page.locator("#id_lesson").select_option(str(lesson.pk))
    page.locator("#id_slug").fill("browser-kv-users")
    page.locator("#id_title").fill("KV cache for several users")
    page.locator("#id_question").fill(
        "{users} users each hold 8,192 tokens of Llama-3.1-8B. How many GB of KV cache?"
    )
    page.locator("#id_calculator").select_option("kv-cache")
    page.locator("#id_output").fill("kv_gb_total")
    page.locator("#id_draws").fill('[{"name": "users", "values": [2, 4, 8]}]')
    page.locator("#id_fixed").fill('{"context_tokens": 8192}')
    page.locator("#id_change").fill("{}")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    expect(page.locator(".practice-preview")).to_contain_text("users each hold 8,192 tokens")
    assert PracticeTemplate.objects.filter(slug="browser-kv-users").exists()

    # A draw outside the calculator's ground: refused, with the input and the rule.
    page.locator("#id_draws").fill('[{"name": "users", "log": [1, 100000000]}]')
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".errornote")).to_be_visible()
    expect(page.locator(".errorlist")).to_contain_text(
        "users must be an integer at least 1 and at most 10,000,000"
    )
    draws = PracticeTemplate.objects.get(slug="browser-kv-users").draws
    assert draws == [{"name": "users", "values": [2, 4, 8]}]
    context.close()

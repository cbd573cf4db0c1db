"""/progress/'s concepts, weakest first, and the mastery level's reason on /progress/ and /practice/,
in Chromium at 375 px with and without JavaScript. Screenshots go to FELAB_SHOTS when it is set."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from lessons.models import PracticeTemplate
from tests.browser.conftest import new_page, screenshot

pytestmark = pytest.mark.browser


@pytest.fixture(params=["htmx", "no-javascript", "desktop"])
def phone(request, browser: Browser) -> Iterator[Page]:
    width = 1000 if request.param == "desktop" else 375
    page = new_page(
        browser,
        timeout_ms=30_000,
        viewport={"width": width, "height": 812},
        java_script_enabled=request.param != "no-javascript",
    )
    page.mode = request.param  # type: ignore[attr-defined]
    yield page
    page.close()


def shot(page: Page, step: str) -> None:
    screenshot(page, f"{page.mode}-{step}")  # type: ignore[attr-defined]


def answer(page: Page, base: str, template: PracticeTemplate, seed: int, typed: str) -> None:
    page.goto(f"{base}{template.get_absolute_url()}?seed={seed}")
    box = page.locator("#practice-answer")
    box.fill(typed)
    box.press("Enter")
    expect(page.locator("#verdict-title")).to_be_visible()


def test_concepts_weakest_first_and_the_mastery_reason_on_a_phone(phone: Page, live_lessons):
    kv = PracticeTemplate.objects.get(slug="l05-kv-per-conversation")
    bills = PracticeTemplate.objects.get(slug="l09-cost-per-1k")
    answer(phone, live_lessons, kv, 1, f"{kv.problem(1).answer / 2} GB")  # K and V counted once
    answer(phone, live_lessons, bills, 1, f"${bills.problem(1).answer}")
    answer(phone, live_lessons, bills, 2, f"${bills.problem(2).answer}")

    phone.goto(f"{live_lessons}/progress/")
    concepts = phone.locator("#concepts > li")
    expect(concepts.first).to_contain_text("K and V in every layer")
    expect(concepts.first).to_contain_text("0 of 1 right first time (0%)")
    expect(phone.locator("#concept-token-prices")).to_contain_text("2 of 2 right first time (100%)")
    link = concepts.first.locator(".concept-training a").first
    expect(concepts.first.locator(".concept-training a")).to_have_count(3)
    box = link.bounding_box()
    assert box is not None and box["height"] >= 44
    reasons = phone.locator("#mastery-reasons")
    expect(reasons).to_contain_text("05 · Attempted: 0 of 3:")
    expect(reasons).to_contain_text("not yet tried")
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    phone.evaluate("document.getElementById('mastery-title').scrollIntoView()")
    shot(phone, "progress-mastery-reason")
    phone.evaluate("document.getElementById('concepts-title').scrollIntoView()")
    shot(phone, "progress-concepts")
    link.click()
    expect(phone.locator("#practice-answer")).to_be_visible()

    phone.goto(f"{live_lessons}/practice/")
    lesson_09 = phone.locator("section.practice-lesson", has_text="Lesson 09")
    expect(lesson_09.locator(".mastery-reason")).to_contain_text("without a hint on 1 day (2 needed)")
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    lesson_09.evaluate("element => element.scrollIntoView()")
    shot(phone, "practice-mastery-reason")


@pytest.mark.parametrize("width", [375, 1000])
def test_the_instructor_reads_predicted_first_tries_in_ten_bins(
    browser: Browser, live_lessons, instructor, student, width
):
    from tests.conftest import PASSWORD
    from tests.quiz.test_recall_calibration import practice

    practice(student, 230)
    teacher = new_page(
        browser, timeout_ms=30_000, viewport={"width": width, "height": 900}, java_script_enabled=False
    )
    teacher.goto(live_lessons + "/accounts/login/?next=/instructor/")
    teacher.get_by_label("Username").fill(instructor.username)
    teacher.get_by_label("Password").fill(PASSWORD)
    teacher.get_by_label("Password").press("Enter")
    table = teacher.locator("#recall-calibration")
    expect(table.locator("tbody tr")).to_have_count(10)
    assert teacher.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    teacher.evaluate("document.getElementById('recall-title').scrollIntoView()")
    screenshot(teacher, f"instructor-recall-{width}")
    teacher.close()

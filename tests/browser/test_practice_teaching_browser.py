"""Practice that teaches, in Chromium on a 375 px phone, with and without JavaScript: a student
answers a KV-cache problem counting K and V once and reads the named mistake; takes one hint,
answers again and is right; sees the lesson's mastery rise on /progress/; an instructor sees the
mistake counted on /instructor/. Screenshots of each step go to /tmp/practice-teaching-*.png."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from lessons.models import PracticeTemplate
from quiz import clock as quiz_clock
from quiz.models import PracticeAttempt, Rating
from tests.browser.conftest import PHONE, new_page
from tests.conftest import PASSWORD
from tests.quiz.clocks import MovableClock

pytestmark = pytest.mark.browser

SLUG = "l05-kv-per-conversation"
TIMEOUT_MS = 30_000


def shot(page: Page, step: str) -> None:
    page.screenshot(path=f"/tmp/practice-teaching-{page.mode}-{step}.png", full_page=True)  # type: ignore[attr-defined]


def no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def type_answer(page: Page, typed: str) -> None:
    box = page.locator("#practice-answer")
    box.fill(typed)
    box.press("Enter")


def test_a_named_mistake_a_hint_a_right_second_try_mastery_and_the_instructors_count(
    phone: Page, browser: Browser, live_lessons, instructor: User, monkeypatch
):
    # From now on, moved by hand: the live server runs in this process and reads it too.
    clock = MovableClock(monkeypatch, start=quiz_clock.now())
    template = PracticeTemplate.objects.get(slug=SLUG)
    problem = template.problem(3)
    phone.goto(f"{live_lessons}{template.get_absolute_url()}?seed=3")
    expect(phone.get_by_text("Right within 10% of the calculator's value; close within 30%.")).to_be_visible()
    shot(phone, "1-question")

    type_answer(phone, f"{problem.answer / 2:.3f} GB")  # K and V counted once
    expect(phone.locator("#practice-mistake")).to_contain_text("counting the cache once")
    expect(phone.get_by_label("Try again (2 tries left)", exact=False)).to_be_visible()
    no_sideways_scroll(phone)
    shot(phone, "2-named-mistake")

    phone.get_by_role("button", name="Hint: step 1").click()
    expect(phone.locator("#practice-hints li")).to_have_count(1)
    expect(phone.locator("#practice-hints")).to_contain_text("a key and a value (2)")
    expect(phone.locator("#practice-mistake")).to_contain_text("counting the cache once")  # still there
    no_sideways_scroll(phone)
    shot(phone, "3-hint")

    type_answer(phone, f"{problem.answer:.3f} GB")
    expect(phone.get_by_role("heading", name="Right", exact=False)).to_be_visible()
    expect(
        phone.get_by_text("Proposed from your answer at try 2 after 1 hint, so no better than Hard: Hard")
    ).to_be_visible()
    expect(phone.locator(".practice-steps li")).to_have_count(len(problem.steps))
    no_sideways_scroll(phone)
    shot(phone, "4-right")
    attempt = PracticeAttempt.objects.get()
    assert (attempt.first_mistake, attempt.tries, attempt.hints_used) == ("kv-once", 2, 1)
    assert attempt.verdict == "right" and attempt.rating == Rating.HARD

    phone.goto(live_lessons + "/progress/")
    row = phone.locator("#practice-table tbody tr", has_text="05 · KV cache")
    expect(row.locator("td").nth(0)).to_have_text("Attempted")
    clock.advance(minutes=5)  # studying on, so the class's figures count this visitor
    for seed in (4, 5):  # two more, right at the first try
        phone.goto(f"{live_lessons}{template.get_absolute_url()}?seed={seed}")
        type_answer(phone, f"{template.problem(seed).answer:.3f} GB")
        expect(phone.get_by_role("heading", name="Right", exact=False)).to_be_visible()
    phone.goto(live_lessons + "/progress/")
    expect(row.locator("td").nth(0)).to_have_text("Familiar")
    no_sideways_scroll(phone)
    shot(phone, "5-progress")
    phone.locator("#practice-table").screenshot(path=f"/tmp/practice-teaching-{phone.mode}-5-table.png")  # type: ignore[attr-defined]

    teacher = new_page(browser, timeout_ms=TIMEOUT_MS, **PHONE)
    teacher.goto(live_lessons + "/accounts/login/?next=/instructor/")
    teacher.get_by_label("Username").fill(instructor.username)
    teacher.get_by_label("Password").fill(PASSWORD)
    teacher.get_by_role("button", name="Log in").click()
    row = teacher.locator("#instructor-practice tbody tr", has_text=template.title)
    expect(row).to_contain_text("named mistake 1")
    expect(row).to_contain_text("kv-once: 1")
    expect(row).to_contain_text("after help 1")
    row.screenshot(path=f"/tmp/practice-teaching-{phone.mode}-6-instructor.png")  # type: ignore[attr-defined]
    teacher.close()

"""A student finds their way through the course: the map, a card, its words, the glossary, and back."""

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import new_page
from tests.browser.test_long_pages_browser import log_in

FIRST_CARD = "/learn/llm-inference-performance/setup-and-guardrails/step-1/"


def test_a_student_starts_from_the_map_and_looks_a_word_up(page: Page, live_lessons):
    page.goto(live_lessons + "/")
    expect(page.locator(".lesson-item").first).to_contain_text("Lesson 00 · Setup and guardrails")
    expect(page.locator(".lesson-item").first).to_contain_text("Continue here")
    page.get_by_role("link", name="Start: Lesson 00 · Step 1 · Why memory speed sets the pace").click()
    expect(page).to_have_url(live_lessons + FIRST_CARD)

    page.locator("#answer-toggle").click()
    page.get_by_role("link", name="Memory bandwidth", exact=True).click()
    expect(page).to_have_url(live_lessons + "/glossary/#term-memory-bandwidth")
    entry = page.locator("#term-memory-bandwidth")
    expect(entry).to_be_in_viewport()
    expect(entry).to_contain_text("GB/s")

    entry.get_by_role("link", name="Lesson 00 · Step 1 · Why memory speed sets the pace").click()
    expect(page).to_have_url(live_lessons + FIRST_CARD)


def test_after_rating_a_card_the_map_continues_at_the_next(page: Page, live_lessons):
    page.goto(live_lessons + FIRST_CARD)
    page.locator("#answer-toggle").click()
    page.get_by_role("button", name="Got it").click()
    expect(page.locator("#rating-result")).not_to_be_empty()
    page.goto(live_lessons + "/")
    expect(page.get_by_role("link", name="Continue: Lesson 00 · Step 2 · What fits in 36 GB")).to_be_visible()
    expect(page.locator(".lesson-item").first).to_contain_text("1 seen · 1 rated")


def test_the_map_and_a_lesson_work_on_a_phone_without_javascript(page_without_js: Page, live_lessons):
    page = page_without_js
    page.set_viewport_size({"width": 360, "height": 800})
    page.goto(live_lessons + "/")
    page.get_by_text("The 3 cards").first.click()  # <details> opens without a script
    expect(page.get_by_role("link", name="Step 2 · What fits in 36 GB")).to_be_visible()
    page.goto(live_lessons + "/learn/llm-inference-performance/quantization/")
    expect(page.get_by_role("heading", name="Try it")).to_be_visible()
    expect(page.get_by_role("link", name="Decode ceiling: the bandwidth wall")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360


def test_a_student_and_an_instructor_each_see_their_own_parts_of_the_kept_lesson_page(
    browser, live_lessons, student, instructor
):
    # The lesson page is kept whole per content version (lessons.views.lesson_detail): the student
    # builds it, then the instructor gets their Edit link from the same process and follows it.
    lesson_url = live_lessons + "/learn/llm-inference-performance/quantization/"
    for user, phone in ((student, True), (instructor, False)):
        viewport = {"width": 360, "height": 800} if phone else {"width": 1280, "height": 900}
        page = new_page(browser, timeout_ms=30_000, viewport=viewport)
        log_in(page, live_lessons, user.username)
        page.goto(lesson_url)
        expect(page.get_by_role("heading", level=1)).to_contain_text("Quantization")
        edit = page.get_by_role("link", name="Edit", exact=True)
        if user == student:
            expect(edit).to_have_count(0)
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            page.locator(".card-list a").first.click()
            expect(page.get_by_role("button", name="Show answer")).to_be_visible()
        else:
            edit.click()
            expect(page).to_have_url(re.compile(r"/admin/lessons/lesson/\d+/change/$"))
        page.close()

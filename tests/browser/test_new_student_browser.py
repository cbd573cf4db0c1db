"""What a new student tripped over (issue 10), checked in Chromium: desktop and phone, with and without JS."""

import pytest
from playwright.sync_api import Browser, Page, expect

from lessons.models import Lesson
from tests.browser.conftest import new_page
from tests.browser.fields import type_and_leave
from tests.conftest import SEED_CARD_URL
from tests.quiz.clocks import MovableClock

STEP_3_URL = SEED_CARD_URL.replace("step-1", "step-3")
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def clock(monkeypatch) -> MovableClock:
    return MovableClock(monkeypatch)


@pytest.fixture
def phone(browser: Browser) -> Page:
    return new_page(browser, timeout_ms=10_000, **PHONE)


def _change(page: Page, label: str, value: str) -> None:
    type_and_leave(page.get_by_label(label, exact=True).first, value)


def test_sim_shows_the_servers_400_in_place_of_the_old_results(page: Page, live_server):
    page.goto(live_server.url + "/sim/")
    expect(page.locator("#sim-results table")).to_be_visible()
    _change(page, "Concurrency levels", "1,2,abc")
    results = page.locator("#sim-results")
    expect(results.get_by_role("alert")).to_contain_text("Nothing simulated")
    expect(results.get_by_role("alert")).to_contain_text("levels")
    expect(results.locator("table")).to_have_count(0)
    expect(results.locator(".plot")).to_have_count(0)


def test_sim_shows_any_other_error_and_drops_the_stale_results(page: Page, live_server):
    page.goto(live_server.url + "/sim/")
    expect(page.locator("#sim-results table")).to_be_visible()
    page.route(
        "**/sim/?*",
        lambda route: route.fulfill(status=503, content_type="text/plain", body="The simulator is busy."),
    )
    _change(page, "Slots", "16")
    alert = page.locator("#sim-results .htmx-error")
    expect(alert).to_contain_text("503")
    expect(alert).to_contain_text("The simulator is busy.")
    expect(page.locator("#sim-results table")).to_have_count(0)


def test_after_rating_one_control_and_n_go_to_the_next_card(page: Page, live_lessons, clock):
    page.goto(live_lessons + SEED_CARD_URL)
    page.locator("#answer-toggle").click()
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("3")
    next_link = page.locator("#rating-result").get_by_role(
        "link", name="Next: Step 2 · Sizing from the capacity line →"
    )
    expect(next_link).to_be_visible()
    page.keyboard.press("n")
    page.wait_for_url("**/step-2/")
    expect(page.locator("#card-label")).to_contain_text("Step 2")


def test_the_last_card_says_the_lesson_is_done_and_what_comes_next(page: Page, live_lessons, clock):
    lesson_03 = Lesson.objects.get(slug="concurrency-sweep")
    lesson_04 = Lesson.objects.get(course=lesson_03.course, number=4)  # the bundled course goes on
    page.goto(live_lessons + STEP_3_URL)
    page.locator("#answer-toggle").click()
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("4")
    done = page.locator(".lesson-done")
    expect(done).to_contain_text("You finished Lesson 03 · Concurrency sweep.")
    expect(done.get_by_role("link", name="Review due cards")).to_be_visible()
    expect(done.get_by_role("link", name="Your progress")).to_be_visible()
    page.keyboard.press("n")
    page.wait_for_url(f"**/learn/llm-inference-performance/{lesson_04.slug}/")
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"Lesson 04 · {lesson_04.title}")


def test_the_last_card_without_javascript(page_without_js: Page, live_lessons, clock):
    page = page_without_js
    page.goto(live_lessons + STEP_3_URL)
    page.locator("#answer-toggle").click()
    page.get_by_role("button", name="Got it").click()
    expect(page.locator(".lesson-done")).to_contain_text("You finished Lesson 03")
    expect(page.locator(".lesson-done").get_by_role("link", name="Next lesson: 04")).to_be_visible()


@pytest.mark.parametrize("path", ["/sim/", STEP_3_URL + "?answer=shown"])
def test_without_javascript_a_chart_is_drawn_not_an_empty_box(page_without_js: Page, live_lessons, path):
    page = page_without_js
    page.goto(live_lessons + path)
    drawing = page.locator(".plot .chart-svg").filter(visible=True)
    expect(drawing).to_have_count(1)
    expect(drawing.locator("polyline")).not_to_have_count(0)
    expect(page.locator(".plot .chart-legend")).to_contain_text("total (model)")
    # Only the interactive chart needs JavaScript: its button stays hidden.
    expect(page.get_by_role("button", name="Explore this chart")).to_be_hidden()


def test_sim_on_a_phone_brings_the_new_results_into_view(phone: Page, live_server):
    phone.goto(live_server.url + "/sim/")
    expect(phone.locator("#sim-results table")).to_be_visible()
    _change(phone, "Slots", "16")
    sentence = phone.locator(".capacity-sentence")
    expect(sentence).to_contain_text("Capacity is C = 16")
    expect(sentence).to_be_in_viewport()
    note = phone.locator("#sim-table-note")
    box = note.bounding_box()
    assert (
        box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    )  # not cut by the table's scroller


def test_a_run_of_levels_1_and_8_draws_the_course_only_where_it_was_measured(page: Page, live_server):
    page.goto(live_server.url + "/sim/?levels=1,8")
    plot = page.locator("#sim-results .plot")
    # The server's drawing says it at once; plotly's chart, asked for, holds the same points.
    expect(
        plot.get_by_text("every level within the SLO: capacity is at least 8").filter(visible=True)
    ).to_be_visible()
    expect(plot.get_by_text("knee: capacity 8")).to_have_count(0)
    plot.hover()
    expect(plot).to_have_attribute("data-drawn", "true")
    course_xs = page.evaluate(
        "() => document.querySelector('#sim-results .plot').data"
        '.filter(t => t.name.includes("course\'s run")).flatMap(t => t.x)'
    )
    assert course_xs and max(course_xs) == 8
    expect(plot.get_by_text("every level within the SLO: capacity is at least 8")).to_be_visible()
    expect(plot.get_by_text("knee: capacity 8")).to_have_count(0)
    expect(page.locator(".capacity-sentence")).to_contain_text("capacity is at least 8")


def test_a_phone_shows_sign_up_and_no_keyboard_hints(phone: Page, live_lessons):
    phone.goto(live_lessons + SEED_CARD_URL)
    expect(phone.get_by_role("link", name="Sign up")).to_be_visible()
    expect(phone.locator(".key-hints")).to_be_hidden()


def test_a_desktop_shows_the_keyboard_hints(page: Page, live_lessons):
    page.goto(live_lessons + SEED_CARD_URL)
    expect(page.locator(".key-hints")).to_be_visible()

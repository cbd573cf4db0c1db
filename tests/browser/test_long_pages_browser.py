"""/progress/ and /glossary/ on a 360 px phone: a summary first, the detail folded, an index."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from lessons.models import Card
from quiz.card_rating import rate_showing
from quiz.learners import Learner
from quiz.models import Rating, Showing
from tests.browser.test_accessibility import serious_violations
from tests.conftest import PASSWORD

PHONE = {"width": 360, "height": 740}
# /progress/ measured 13,452 px tall at 360 px before the summary (70 rows, all open); the
# folded page is about 3,100. The bound leaves room for more lessons, not for unfolded tables.
PROGRESS_MAX_PX = 5000


def log_in(page: Page, base: str, username: str = "sam", password: str = PASSWORD) -> None:
    page.goto(base + "/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def page_height(page: Page) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


@pytest.fixture
def rated_student(live_lessons) -> User:
    user = User.objects.create_user("sam", "sam@example.org", PASSWORD)
    for card in Card.objects.filter(lesson__slug="concurrency-sweep").order_by("step")[:3]:
        rate_showing(Showing.record(Learner(user=user), card), Rating.GOT_IT)
    return user


def test_progress_opens_with_the_summary_above_the_fold_and_folds_the_cards(
    page: Page, live_lessons, rated_student
):
    page.set_viewport_size(PHONE)
    log_in(page, live_lessons)
    page.goto(live_lessons + "/progress/")

    stats = page.locator(".summary-stats")
    expect(stats).to_contain_text("Cards rated")
    expect(stats).to_contain_text("3 of")
    box = stats.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"], box  # above the fold
    expect(page.locator("#forecast-chart .chart-narrow svg")).to_be_visible()

    lesson = page.locator("details.progress-lesson", has_text="Lesson 03")
    expect(lesson.locator("summary")).to_contain_text("3 of")
    table = lesson.locator("table")
    expect(table).to_be_hidden()
    folded = page_height(page)
    assert folded <= PROGRESS_MAX_PX, folded

    lesson.locator("summary").click()
    expect(table).to_be_visible()
    expect(table).to_contain_text("Got it")
    assert page_height(page) > folded
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert serious_violations(page) == [], scheme


def test_the_due_chart_is_drawn_without_javascript(page_without_js: Page, live_lessons, rated_student):
    page = page_without_js
    page.set_viewport_size(PHONE)
    log_in(page, live_lessons)
    page.goto(live_lessons + "/progress/")
    expect(page.locator("#forecast-chart .chart-narrow svg")).to_be_visible()
    expect(page.locator("#forecast-note")).to_contain_text("3 within a day")


def test_glossary_index_links_jump_to_their_letter(page: Page, live_lessons):
    page.set_viewport_size(PHONE)
    page.goto(live_lessons + "/glossary/")
    index = page.get_by_role("navigation", name="Glossary, A to Z")
    expect(index).to_be_in_viewport()
    index.get_by_role("link", name="K", exact=True).click()
    expect(page).to_have_url(live_lessons + "/glossary/#letter-k")
    heading = page.locator("#letter-k-title")
    expect(heading).to_be_in_viewport()
    assert heading.bounding_box()["y"] < 100  # at the top, not merely somewhere on screen
    expect(page.locator("#letter-k .glossary-entry").first).to_contain_text("K")
    heading.get_by_role("link", name="back to A–Z").click()
    expect(index).to_be_in_viewport()


def test_glossary_filters_as_one_types(page: Page, live_lessons):
    page.set_viewport_size(PHONE)
    page.goto(live_lessons + "/glossary/")
    everything = page.locator(".glossary-entry").count()
    page.get_by_label("Find a term").press_sequentially("kv cache")
    visible = page.locator(".glossary-entry:visible")
    expect(visible.first).to_contain_text("KV cache")
    shown = visible.count()
    assert 0 < shown < everything
    for text in visible.all_inner_texts():
        assert "kv cache" in text.lower()
    expect(page.locator("[data-glossary-count]")).to_have_text(f"{shown} terms")
    expect(page.locator("#letter-a")).to_be_hidden()  # a letter with no match folds away
    assert page.url == live_lessons + "/glossary/"  # filtered in place, no request
    page.get_by_label("Find a term").fill("")
    expect(page.locator(".glossary-entry:visible")).to_have_count(everything)


def test_glossary_box_searches_without_javascript(page_without_js: Page, live_lessons):
    page = page_without_js
    page.set_viewport_size(PHONE)
    page.goto(live_lessons + "/glossary/")
    everything = page.locator(".glossary-entry").count()
    page.get_by_label("Find a term").fill("kv cache")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(live_lessons + "/glossary/?q=kv+cache")
    entries = page.locator(".glossary-entry")
    expect(entries.first).to_be_visible()
    assert 0 < entries.count() < everything
    for text in entries.all_inner_texts():
        assert "kv cache" in text.lower()
    expect(page.locator("#glossary-count")).to_contain_text("mentioning “kv cache”")

"""/progress/ and /glossary/ on a 360 px phone: a summary first, the detail folded, an index."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from lessons.models import Card
from quiz.learners import Learner
from quiz.models import Rating, Review, Showing
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
        Review.rate(Showing.record(Learner(user=user), card), Rating.GOT_IT)
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


def test_the_due_chart_is_drawn_without_javascript(page_without_js: Page, live_lessons, rated_student):
    page = page_without_js
    page.set_viewport_size(PHONE)
    log_in(page, live_lessons)
    page.goto(live_lessons + "/progress/")
    expect(page.locator("#forecast-chart .chart-narrow svg")).to_be_visible()
    expect(page.locator("#forecast-note")).to_contain_text("3 within a day")

"""A student finding the way on: the last card of a lesson, logging in from a card, a card's details."""

import pytest
from playwright.sync_api import Page, expect

from lessons.models import Card, Lesson
from tests.conftest import PASSWORD
from tests.quiz.clocks import MovableClock

LESSON_09 = "/learn/llm-inference-performance/eval-harness/"


@pytest.fixture
def clock(monkeypatch) -> MovableClock:
    return MovableClock(monkeypatch)


def last_card_url(lesson_slug: str) -> str:
    return Card.objects.filter(lesson__slug=lesson_slug, published=True).order_by("-step").first().page_url


@pytest.mark.parametrize("answer", ["hidden", "shown"])
def test_the_last_card_offers_the_next_lesson_review_and_progress_before_it_is_rated(
    page: Page, live_lessons, answer
):
    following = Lesson.objects.get(slug="eval-harness").following
    page.goto(live_lessons + last_card_url("eval-harness") + ("?answer=shown" if answer == "shown" else ""))
    steps = page.get_by_role("navigation", name="Steps")
    steps.get_by_role("link", name=f"Next lesson: {following.number:02d} · {following.title}").click()
    page.wait_for_url(f"**{following.get_absolute_url()}")
    page.go_back()
    expect(steps.get_by_role("link", name="Review")).to_have_attribute("href", "/review/")
    expect(steps.get_by_role("link", name="Progress")).to_have_attribute("href", "/progress/")


@pytest.mark.parametrize("link", ["Log in", "Sign up"])
def test_logging_in_from_a_lesson_09_card_comes_back_to_it(page: Page, live_lessons, clock, student, link):
    card_url = LESSON_09 + "step-2/?answer=shown"
    page.goto(live_lessons + card_url)
    page.get_by_role("navigation", name="Site").get_by_role("link", name=link).click()
    if link == "Sign up":
        page.get_by_role("main").get_by_role("link", name="Have an account? Log in").click()
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(live_lessons + card_url)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    expect(page.get_by_role("heading", name="In plain words")).to_be_visible()


def test_signing_up_from_a_card_comes_back_to_it(page: Page, live_lessons, clock):
    page.goto(live_lessons + LESSON_09 + "step-3/")
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Sign up").click()
    page.get_by_label("Username").fill("newcomer")
    page.get_by_label("Password", exact=True).fill("a-long-enough-passphrase-42")
    page.get_by_label("Password confirmation").fill("a-long-enough-passphrase-42")
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_url(live_lessons + LESSON_09 + "step-3/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()

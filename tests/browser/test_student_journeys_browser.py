"""A student finding the way on: the last card of a lesson, logging in from a card, a card's details."""

import re

import pytest
from playwright.sync_api import Page, expect

from lessons.models import Card, Lesson
from tests.browser.conftest import DESKTOP, new_page
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


def test_hide_answer_gives_back_what_was_typed(page: Page, live_lessons):
    page.goto(live_lessons + LESSON_09 + "step-1/")
    page.get_by_label("Your answer").fill("a held-out set, scored the same way each time")
    page.locator("#answer-toggle").click()
    expect(page.locator(".typed-answer")).to_contain_text("a held-out set")
    page.locator("#answer-toggle").click()
    expect(page.locator("#your-answer")).to_have_value("a held-out set, scored the same way each time")


def test_hide_answer_gives_back_what_was_typed_without_javascript(page_without_js: Page, live_lessons):
    page = page_without_js
    page.goto(live_lessons + LESSON_09 + "step-1/")
    page.get_by_label("Your answer").fill("typed without JavaScript")
    page.locator("#answer-toggle").click()
    page.wait_for_url("**?answer=shown")
    page.locator("#answer-toggle").click()
    page.wait_for_url(lambda url: "answer=shown" not in url)
    expect(page.locator("#your-answer")).to_have_value("typed without JavaScript")


def test_a_second_space_after_space_showed_the_answer_does_not_hide_it(page: Page, live_lessons):
    page.goto(live_lessons + LESSON_09 + "step-1/")
    page.locator("#card-label").click()
    page.keyboard.press("Space")
    toggle = page.locator("#answer-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#answer-body")).to_be_focused()
    sent: list[str] = []
    page.on("request", lambda request: sent.append(f"{request.method} {request.url}"))
    page.keyboard.press("Space")
    # A hide would be sent as the second Space is handled, before this key's rating.
    with page.expect_response(lambda response: response.url.endswith("/rate/")):
        page.keyboard.press("2")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Hard")
    assert [request.split(" ")[0] + " " + request.split("/")[-2] for request in sent] == ["POST rate"]
    expect(toggle).to_have_attribute("aria-expanded", "true")


@pytest.fixture
def page_in_tokyo(browser) -> Page:
    return new_page(
        browser,
        timeout_ms=10_000,
        **DESKTOP,
        timezone_id="Asia/Tokyo",
        locale="en-GB",
    )


def test_due_times_are_shown_in_the_students_own_time(page_in_tokyo: Page, live_lessons, clock):
    page = page_in_tokyo
    page.goto(live_lessons + LESSON_09 + "step-1/?answer=shown")
    # The clock starts at 09:00 UTC: Got it comes back 10 minutes later, 18:10 in Tokyo.
    expect(page.get_by_role("button", name="Got it")).to_have_attribute("title", re.compile(r"18:10 GMT\+9"))
    page.get_by_role("button", name="Got it").click()
    when = page.locator("#rating-result time")
    expect(when).to_have_text(re.compile(r"^\d+ \w+,? 18:10 GMT\+9$"))
    expect(when).to_have_attribute("datetime", re.compile(r"T09:10:00Z$"))
    page.goto(live_lessons + "/review/")
    expect(page.locator(".review-empty time")).to_have_text(re.compile(r"18:10 GMT\+9$"))


def test_without_javascript_due_times_stay_in_utc_and_say_so(page_without_js: Page, live_lessons, clock):
    page = page_without_js
    page.goto(live_lessons + LESSON_09 + "step-1/?answer=shown")
    page.get_by_role("button", name="Got it").click()
    page.goto(live_lessons + "/review/")
    expect(page.locator(".review-empty time")).to_have_text(re.compile(r"at 09:10 UTC$"))


def test_with_a_draft_in_the_middle_students_see_steps_1_2_3(page: Page, live_lessons):
    cards = list(Card.objects.filter(lesson__slug="eval-harness").order_by("step"))
    Card.objects.filter(pk=cards[1].pk).update(published=False)
    shown = [cards[0], *cards[2:]]
    page.goto(live_lessons + LESSON_09)
    labels = page.locator("main a[href*='/step-']").all_inner_texts()
    assert labels == [f"Step {number} · {card.title}" for number, card in enumerate(shown, start=1)]
    page.goto(live_lessons + shown[0].page_url)
    page.get_by_role("navigation", name="Steps").get_by_role("link", name="Step 2 →").click()
    page.wait_for_url(f"**{shown[1].page_url}")  # the link keeps the card's own address
    expect(page.locator("#card-label")).to_have_text(f"Step 2 · {shown[1].title}")
    expect(page.get_by_role("navigation", name="Steps").get_by_role("link", name="← Step 1")).to_be_visible()
    expect(page.get_by_role("navigation", name="Steps").get_by_role("link", name="Step 3 →")).to_be_visible()

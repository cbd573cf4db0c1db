"""A student in Chromium: type, reveal with the keyboard, rate with a key, see progress and review."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from lessons.models import Card
from quiz.card_rating import rate_showing
from quiz.models import CardState, LayerOpening, Rating, Review, Showing
from tests.browser.conftest import DESKTOP, new_page
from tests.browser.test_accessibility import serious_violations
from tests.conftest import PASSWORD, SEED_CARD_URL
from tests.quiz.clocks import MovableClock


@pytest.fixture
def clock(monkeypatch) -> MovableClock:
    # The live server runs in this process, so it reads the same moved clock.
    return MovableClock(monkeypatch)


@pytest.fixture
def console_errors(page: Page) -> Iterator[list[str]]:
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield errors


def type_then_reveal_with_space(page: Page, answer: str) -> None:
    box = page.get_by_label("Your answer")
    box.click()
    # Shortcut keys typed into the box are just text.
    page.keyboard.type(answer + " 3")
    expect(box).to_have_value(answer + " 3")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "false")
    box.fill(answer)
    page.locator("#card-label").click()  # leave the box
    page.keyboard.press("Space")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")


def test_type_reveal_with_keyboard_rate_with_3_then_progress_and_review(
    page: Page, live_lessons, clock, console_errors
):
    page.goto(live_lessons + SEED_CARD_URL)
    expect(page.get_by_text("Space", exact=True)).to_be_visible()  # the keys are listed

    type_then_reveal_with_space(page, "One fetch serves everyone")
    expect(page.locator(".typed-answer")).to_contain_text("One fetch serves everyone")
    expect(page.get_by_role("heading", name="In plain words")).to_be_visible()
    assert page.url.endswith(SEED_CARD_URL + "?answer=shown")
    expect(page.get_by_role("button", name="Got it")).to_contain_text("in 10 min")

    page.keyboard.press("3")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Got it")
    review = Review.objects.get()
    assert review.rating == Rating.GOT_IT and review.showing.answer == "One fetch serves everyone"

    page.goto(live_lessons + "/progress/")
    row = page.locator("tr", has_text="Step 1 · Concurrency sweep")
    expect(row).to_contain_text("Got it")
    expect(page.locator('progress.progress-bar[aria-label^="Lesson 03:"]')).to_have_attribute("value", "1")

    page.goto(live_lessons + "/review/")
    expect(page.get_by_text("Nothing is due now.")).to_be_visible()
    expect(page.locator(".due-item")).to_have_count(0)
    assert console_errors == []


def test_missed_it_comes_back_due_on_review_soon_after(page: Page, live_lessons, clock):
    page.goto(live_lessons + SEED_CARD_URL)
    type_then_reveal_with_space(page, "no idea")
    page.keyboard.press("1")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Missed it")
    expect(page.locator("#rating-result")).to_contain_text("comes back in 1 min")

    page.goto(live_lessons + "/review/")
    expect(page.get_by_text("Nothing is due now.")).to_be_visible()
    expect(page.locator(".review-empty")).to_contain_text("in 1 min")

    clock.advance(minutes=2)
    page.reload()
    expect(page.locator(".due-item")).to_have_count(1)
    expect(page.locator(".due-item")).to_contain_text("Step 1 · Concurrency sweep")

    # One at a time, in the card page's flow.
    page.get_by_role("link", name="Start with Step 1 · Concurrency sweep").click()
    expect(page.get_by_text("Reviewing the cards due now")).to_be_visible()
    page.locator("#card-label").click()
    page.keyboard.press("Enter")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("4")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Easy")
    page.get_by_role("link", name="Next due card →").click()
    expect(page.get_by_text("Nothing is due now.")).to_be_visible()
    assert CardState.objects.get().review_count == 2


def test_keys_respect_the_state_of_the_card(page: Page, live_lessons, clock):
    page.goto(live_lessons + SEED_CARD_URL)
    page.locator("#card-label").click()
    page.keyboard.press("2")  # not shown yet: rating keys do nothing
    page.keyboard.press("Escape")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "false")
    assert not Review.objects.exists() and not Showing.objects.exists()

    page.keyboard.press("Space")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Escape")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_label("Your answer")).to_be_visible()


def test_changing_the_rating_within_a_minute_replaces_it_in_the_browser(page: Page, live_lessons, clock):
    page.goto(live_lessons + SEED_CARD_URL)
    type_then_reveal_with_space(page, "guess")
    page.keyboard.press("3")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Got it")
    page.keyboard.press("2")
    expect(page.locator("#rating-result")).to_contain_text("Changed to: Hard")
    assert Review.objects.get().rating == Rating.HARD


def test_opening_go_deeper_is_counted(page: Page, live_lessons, clock):
    page.goto(live_lessons + SEED_CARD_URL)
    page.locator("#answer-toggle").click()
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")
    # htmx posts the opening in the background; wait for the request, not a fixed time.
    with page.expect_response(lambda response: response.url.endswith("/opened/")) as opened:
        page.get_by_text("Go deeper: the engineer version").click()
    assert opened.value.status == 204
    expect(page.get_by_text("More detail:")).to_be_visible()
    opening = LayerOpening.objects.get()
    assert opening.layer == "deeper" and opening.showing == Showing.objects.get()


def test_study_without_javascript(page_without_js: Page, live_lessons, clock):
    page = page_without_js
    page.goto(live_lessons + SEED_CARD_URL)
    page.get_by_label("Your answer").fill("plain form")
    page.locator("#answer-toggle").click()
    page.wait_for_url("**?answer=shown")
    expect(page.locator(".typed-answer")).to_contain_text("plain form")
    page.get_by_role("button", name="Hard").click()
    expect(page.get_by_text("Saved: Hard.")).to_be_visible()
    expect(page.get_by_text("You rated it Hard this time")).to_be_visible()
    assert Review.objects.get().showing.answer == "plain form"


def test_log_in_keeps_what_was_studied(page: Page, live_lessons, clock, student):
    page.goto(live_lessons + SEED_CARD_URL)
    type_then_reveal_with_space(page, "before logging in")
    page.keyboard.press("4")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Easy")

    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    page.goto(live_lessons + "/progress/")
    expect(page.locator("tr", has_text="Step 1 · Concurrency sweep")).to_contain_text("Easy")
    assert Review.objects.get().user == student


def test_instructor_sees_the_class_chart(page: Page, live_lessons, clock, instructor, console_errors):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    showing = Showing.objects.create(card=card, anonymous_id="visitor", answer="hi", shown_at=clock.now())
    rate_showing(showing, Rating.GOT_IT)
    clock.advance(minutes=5)  # the visitor studies on, so the class's chart counts them
    Showing.objects.create(card=card, anonymous_id="visitor", answer="", shown_at=clock.now())
    page.goto(live_lessons + "/accounts/login/?next=/instructor/")
    page.get_by_label("Username").fill("ines")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="How the class rated each card")).to_be_visible()
    expect(page.locator("#ratings-chart .chart-static rect").filter(visible=True)).not_to_have_count(0)
    page.locator("#ratings-chart .plot").hover()
    expect(page.locator("#ratings-chart .plot[data-drawn] svg.main-svg").first).to_be_visible()
    expect(page.locator("#ratings-chart .bars path")).not_to_have_count(0)
    assert console_errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_filled_in_student_and_instructor_pages_pass_axe(page: Page, live_lessons, clock, instructor, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(live_lessons + SEED_CARD_URL)
    type_then_reveal_with_space(page, "a typed answer")
    page.keyboard.press("1")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Missed it")
    problems = {"card with typed answer and rating": serious_violations(page)}
    clock.advance(minutes=5)
    for name, url in [
        ("progress", "/progress/"),
        ("review, due", "/review/"),
        ("sign up", "/accounts/signup/"),
    ]:
        page.goto(live_lessons + url)
        problems[name] = serious_violations(page)
    page.goto(live_lessons + "/review/next/")
    problems["card in review"] = serious_violations(page)
    page.goto(live_lessons + "/accounts/login/?next=/instructor/")
    page.get_by_label("Username").fill("ines")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector("#ratings-chart .chart-static")
    problems["instructor"] = serious_violations(page)
    assert {name: found for name, found in problems.items() if found} == {}


def test_two_students_on_the_same_card_each_see_only_their_own(
    page: Page, browser, live_lessons, clock, student
):
    """The card page is kept once for everyone (pagecache/kept_pages.py); what is kept must not
    carry one student's answer, rating or account into another's browser."""
    page.goto(live_lessons + "/accounts/login/")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(live_lessons + SEED_CARD_URL)
    type_then_reveal_with_space(page, "sam's own words")
    page.keyboard.press("2")
    expect(page.locator("#rating-result")).to_contain_text("Saved: Hard")

    other = new_page(browser, **DESKTOP)
    other.goto(live_lessons + SEED_CARD_URL + "?answer=shown")
    expect(other.get_by_role("heading", name="In plain words")).to_be_visible()
    expect(other.locator(".typed-answer")).to_have_count(0)
    expect(other.locator("#rating-result")).to_be_empty()
    expect(other.get_by_role("link", name="Log in")).to_be_visible()
    expect(other.get_by_role("button", name="Log out")).to_have_count(0)
    other.get_by_role("button", name="Easy").click()
    expect(other.locator("#rating-result")).to_contain_text("Saved: Easy")
    other.close()

    page.reload()
    expect(page.locator(".typed-answer")).to_contain_text("sam's own words")
    expect(page.locator("#rating-result")).to_contain_text("You rated it Hard")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    assert sorted(Review.objects.values_list("rating", flat=True)) == [Rating.HARD, Rating.EASY]

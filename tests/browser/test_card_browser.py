from playwright.sync_api import Page, expect

from tests.conftest import SEED_CARD_URL
from tests.textutil import seed_squashed, squash

SECTIONS = [
    "In plain words",
    "Picture it",
    "With real numbers",
    "Words to know",
    "Go deeper: the engineer version",
    "How did you do?",
]


def assert_answer_hidden(page: Page) -> None:
    toggle = page.locator("#answer-toggle")
    expect(toggle).to_have_text("Show answer")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    for title in SECTIONS:
        expect(page.get_by_text(title, exact=True)).to_have_count(0)


def assert_every_section_visible_in_order(page: Page) -> None:
    toggle = page.locator("#answer-toggle")
    expect(toggle).to_have_text("Hide answer")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    tops = []
    for title in SECTIONS:
        heading = page.get_by_role("heading", name=title, exact=True)
        expect(heading).to_be_visible()
        tops.append(heading.bounding_box()["y"])
    assert tops == sorted(tops)
    page.get_by_text("Go deeper: the engineer version").click()
    expect(page.get_by_text("More detail:")).to_be_visible()
    # The card text as the seed has it: without the live panel and the note on what the kit is,
    # which the site adds.
    text = page.locator("article.card").evaluate(
        "card => { const copy = card.cloneNode(true); copy.querySelectorAll('.layer-live, .app-note').forEach(e => e.remove()); return copy.textContent; }"
    )
    text = squash(text).replace("Hideanswer", "", 1)
    assert text.startswith(seed_squashed())


def test_show_and_hide_answer_with_htmx(page: Page, live_lessons):
    page.goto(live_lessons + SEED_CARD_URL)
    assert_answer_hidden(page)
    page.locator("#answer-toggle").click()
    assert_every_section_visible_in_order(page)
    assert page.url.endswith("?answer=shown")  # htmx pushed a shareable URL
    page.locator("#answer-toggle").click()
    assert_answer_hidden(page)


def test_toggle_is_reachable_and_pressable_by_keyboard(page: Page, live_lessons):
    page.goto(live_lessons + SEED_CARD_URL)
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "answer-toggle":
            break
    assert page.evaluate("document.activeElement.id") == "answer-toggle"
    page.keyboard.press("Enter")
    expect(page.locator("#answer-toggle")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#answer-toggle")).to_be_focused()

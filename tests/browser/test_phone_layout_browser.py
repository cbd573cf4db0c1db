"""Nothing scrolls sideways on a 320 px phone: every card with all of it open, every calculator, /sim/."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from felab_sim.core.calculators import CALCULATORS
from lessons.models import Card

WIDE_PAGES = """() => {
  const root = document.scrollingElement;
  if (root.scrollWidth <= root.clientWidth) return null;
  // Name the widest element that pokes out, to say what to fix.
  let widest = null, right = root.clientWidth;
  for (const element of document.body.querySelectorAll('*')) {
    const box = element.getBoundingClientRect();
    if (box.right > right + 0.5) { right = box.right; widest = element; }
  }
  const what = widest ? widest.tagName.toLowerCase() + (widest.className ? '.' + String(widest.className).split(' ')[0] : '') : '?';
  return `${root.scrollWidth} px wide (${what}: ${(widest && widest.textContent || '').trim().slice(0, 60)})`;
}"""


@pytest.fixture
def phone_320(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 320, "height": 640})
    context.set_default_timeout(30_000)
    context.set_default_navigation_timeout(60_000)
    yield context.new_page()
    context.close()


def too_wide(page: Page, url: str) -> str | None:
    page.goto(url)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    return page.evaluate(WIDE_PAGES)


def test_no_card_scrolls_sideways_at_320_px_with_its_answer_and_details_open(phone_320: Page, live_lessons):
    cards = Card.objects.filter(published=True, lesson__published=True).select_related("lesson__course")
    urls = [card.page_url + "?answer=shown" for card in cards]
    assert len(urls) > 50
    wide = {url: found for url in urls if (found := too_wide(phone_320, live_lessons + url))}
    assert wide == {}


def test_no_calculator_and_not_the_simulator_scrolls_sideways_at_320_px(phone_320: Page, live_server):
    urls = ["/sim/", *(f"/sim/calc/{name}/" for name in CALCULATORS)]
    wide = {url: found for url in urls if (found := too_wide(phone_320, live_server.url + url))}
    assert wide == {}

"""Nothing scrolls sideways on a 320 px phone: every card with all of it open, every calculator, /sim/."""

import pytest
from playwright.sync_api import Browser, Page, expect

from felab_sim.engine.calculators import CALCULATORS
from lessons.models import Card
from tests.browser.conftest import new_page

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
def phone_320(browser: Browser) -> Page:
    return new_page(browser, timeout_ms=30_000, viewport={"width": 320, "height": 640})


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
    urls = ["/sim/", "/sim/engine/", "/sim/chain/", *(f"/sim/calc/{name}/" for name in CALCULATORS)]
    wide = {url: found for url in urls if (found := too_wide(phone_320, live_server.url + url))}
    assert wide == {}


# Each tick label's box in the phone-sized chart, and the colours of its bars and legend swatches.
CHART_TEXT = """() => {
  const svg = document.querySelector('.chart-narrow svg');
  const boxes = [...svg.querySelectorAll('text.tick')].map(t => {
    const b = t.getBoundingClientRect();
    return {text: t.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom};
  });
  const bars = [...new Set([...svg.querySelectorAll('rect[fill]')].map(r => r.getAttribute('fill')))];
  const swatches = [...document.querySelectorAll('.chart-legend .legend-key')].map(
    k => (k.querySelector('[fill]:not([fill=none])') || k.querySelector('[stroke]')).getAttribute(k.querySelector('[fill]:not([fill=none])') ? 'fill' : 'stroke'));
  return {boxes, bars, swatches};
}"""


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    return [
        (a["text"], b["text"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    ]


@pytest.fixture
def phone_360(browser: Browser) -> Page:
    return new_page(
        browser, timeout_ms=30_000, viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_calculators_chart_is_readable_on_a_360_px_phone(phone_360: Page, live_server, name):
    phone_360.goto(f"{live_server.url}/sim/calc/{name}/")
    chart = phone_360.evaluate(CHART_TEXT)
    assert chart["boxes"], "the phone-sized chart is shown"
    assert overlapping(chart["boxes"]) == []
    # A legend, if any, has a swatch for every colour the bars are drawn in.
    if chart["swatches"]:
        assert set(chart["bars"]) <= set(chart["swatches"])


def test_the_sizing_chart_counts_billions_in_short(phone_360: Page, live_server):
    phone_360.goto(f"{live_server.url}/sim/calc/sizing/?tickets_per_month=500000000")
    labels = [box["text"] for box in phone_360.evaluate(CHART_TEXT)["boxes"]]
    assert {"1 B", "2 B"} <= set(labels)
    assert "1,000,000,000" not in labels and "2,000,000,000" not in labels


@pytest.mark.parametrize("name", ["cost", "finetune-memory"])
def test_the_interactive_bar_chart_names_every_bar_in_full_on_a_360_px_phone(
    phone_360: Page, live_server, name
):
    phone_360.goto(f"{live_server.url}/sim/calc/{name}/")
    phone_360.get_by_role("button", name="Explore this chart").first.click()
    chart = phone_360.locator("[data-drawn=true]").first
    expect(chart.locator(".xtick text").first).to_be_visible()
    boxes = chart.evaluate(
        """element => { const edge = element.getBoundingClientRect();
        return [...element.querySelectorAll('.xtick text')].map(t => { const b = t.getBoundingClientRect();
          return {text: t.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom, inside: b.left >= edge.left && b.right <= edge.right}; }); }"""
    )
    assert [box["text"] for box in boxes if not box["inside"]] == []
    assert overlapping(boxes) == []

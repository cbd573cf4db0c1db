"""A setting out of its range, with JavaScript on: htmx sends nothing, so the page must say why
(under the field) and mark the old results as not matching the settings until they do again."""

import pytest
from playwright.sync_api import Browser, Page, expect

from felab_sim.engine.calculators import CALCULATORS
from tests.browser.conftest import DESKTOP, new_page

SIZES = {
    "desktop": DESKTOP,
    "phone": {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True},
}


@pytest.fixture(params=list(SIZES))
def screen(request, browser: Browser) -> Page:
    return new_page(browser, timeout_ms=30_000, **SIZES[request.param])


def leave_with(page: Page, field_id: str, value: str) -> None:
    field = page.locator(f"#{field_id}")
    field.fill(value)
    field.press("Tab")


def assert_refused_then_redrawn(page: Page, results_id: str, field_id: str, bad: str, good: str) -> None:
    results = page.locator(f"#{results_id}")
    expect(results.locator(".chart-static")).to_have_count(1)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url) if "?" in request.url else None)
    leave_with(page, field_id, bad)
    error = page.locator(f"#{field_id}-js-error")
    expect(error).to_be_visible()
    expect(error).not_to_be_empty()
    expect(page.locator(f"#{field_id}")).to_have_attribute("aria-invalid", "true")
    note = results.locator(".stale-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("not the ones above")
    expect(results).to_have_class("sim-results results-stale")
    assert requests == []  # nothing sent: the browser refused the value
    leave_with(page, field_id, good)
    expect(results.locator(".stale-note")).to_have_count(0)
    expect(error).to_have_count(0)
    expect(results.locator(".chart-static")).to_have_count(1)
    expect(page.locator(f"#{field_id}")).not_to_have_attribute("aria-invalid", "true")


@pytest.mark.parametrize(
    ("field", "bad", "good"),
    [
        ("slots", "-5", "4"),
        ("slots", "99999999", "16"),
        ("growth", "5", "0.1"),
        ("prefill_tok_s", "0", "3000"),
    ],
)
def test_sim_says_which_setting_is_out_of_range_and_that_the_results_are_old(
    screen: Page, live_server, field, bad, good
):
    screen.goto(live_server.url + "/sim/")
    field_id = screen.locator(f"form.sim-form [name='{field}']").get_attribute("id")
    assert_refused_then_redrawn(screen, "sim-results", field_id, bad, good)


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_calculator_says_which_setting_is_out_of_range(screen: Page, live_server, name):
    screen.goto(f"{live_server.url}/sim/calc/{name}/")
    field = screen.locator("form.sim-form input[type=number][min]").first
    field_id, low, value = field.get_attribute("id"), float(field.get_attribute("min")), field.input_value()
    assert_refused_then_redrawn(screen, "calc-results", field_id, f"{low - 5:g}", value)

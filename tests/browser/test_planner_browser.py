"""The planner's curve on /sim/engine/ at 375 px: with JavaScript a changed target redraws the
answer in place; without it the form posts and the table of points carries every figure; a bad
target is refused under its field."""

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_page, screenshot
from tests.browser.fields import type_and_leave
from tests.browser.test_phone_layout_browser import WIDE_PAGES

# A short curve keeps each page to a few hundred milliseconds of simulation on a busy machine.
QUERY = "curve_max_concurrency=64"


def shot(page: Page, name: str) -> None:
    screenshot(page, name, "#engine-planner")


def _phone(browser: Browser, javascript: bool) -> Page:
    return new_page(
        browser,
        timeout_ms=30_000,
        viewport={"width": 375, "height": 740},
        is_mobile=True,
        has_touch=True,
        java_script_enabled=javascript,
    )


@pytest.fixture
def phone(browser: Browser) -> Page:
    return _phone(browser, True)


@pytest.fixture
def phone_without_js(browser: Browser) -> Page:
    return _phone(browser, False)


def test_on_a_phone_a_tighter_tpot_target_redraws_the_best_concurrency_in_place(phone: Page, live_server):
    phone.goto(f"{live_server.url}/sim/engine/?{QUERY}")
    best = phone.locator("#planner-best")
    expect(best).to_contain_text("The best concurrency that meets")
    before = best.get_attribute("data-best")
    expect(phone.locator("#engine-planner .chart-narrow").filter(visible=True)).to_have_count(1)
    expect(phone.locator("#planner-points tbody tr")).to_have_count(7)  # C = 1 … 64
    assert phone.evaluate(WIDE_PAGES) is None
    shot(phone, "planner-375-js")
    phone.evaluate("window.__same_page = true")
    type_and_leave(phone.get_by_label("TPOT target"), "30")
    phone.wait_for_url("**tpot_target_ms=30**")
    expect(best).not_to_have_attribute("data-best", before or "")
    assert phone.evaluate("window.__same_page === true")  # htmx swapped the results in
    # Every concurrency the new answer does not meet is marked so in the table.
    chosen = int(best.get_attribute("data-best") or 0)
    for row in phone.locator("#planner-points tbody tr").all():
        if int((row.get_attribute("id") or "c0").rsplit("c", 1)[1]) > chosen:
            expect(row).to_have_attribute("data-meets", "no")


def test_on_a_phone_without_javascript_the_table_has_the_points_and_a_bad_target_names_its_field(
    phone_without_js: Page, live_server
):
    page = phone_without_js
    page.goto(f"{live_server.url}/sim/engine/?{QUERY}")
    expect(page.locator("#engine-planner .chart-narrow svg")).to_be_visible()
    row = page.locator("#planner-c16")
    expect(row).to_contain_text("tok/s")
    expect(row).to_contain_text("$")
    expect(page.locator("#planner-points thead")).to_contain_text("±")
    # The note under the table names the runs behind the bands once, then each band's figures.
    note = page.locator("#planner-expected")
    assert note.inner_text().count("published serving runs felab predicted") == 1
    expect(note).to_contain_text("on tok/s a user, 1 ÷ it")
    expect(note).to_contain_text("on $ per million output tokens, a price ÷ it")
    assert page.evaluate(WIDE_PAGES) is None
    shot(page, "planner-375-nojs")
    page.get_by_label("TTFT target").fill("0")
    page.get_by_role("button", name="Simulate").click()
    expect(page.locator(".form-errors")).to_contain_text("TTFT target")
    expect(page.get_by_label("TTFT target")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("TTFT target").fill("2000")
    page.get_by_role("button", name="Simulate").click()
    page.wait_for_url("**ttft_target_ms=2000**")
    expect(page.locator("#planner-best")).to_contain_text("TTFT within 2,000 ms")


@pytest.mark.parametrize("fixture", ["phone", "phone_without_js"], ids=["htmx", "no JavaScript"])
def test_on_a_phone_a_1k_1k_curve_answers_beside_the_refused_single_run(request, live_server, fixture):
    page: Page = request.getfixturevalue(fixture)
    page.goto(f"{live_server.url}/sim/engine/?input_tokens=1024&output_tokens=1024&{QUERY}")
    # The single run is over its own cap on requests; the curve, on its own budget, still answers.
    expect(page.locator(".form-errors").first).to_contain_text(
        "The single run was not simulated (the curve below was)"
    )
    expect(page.get_by_label("Requests", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#planner-points tbody tr").first).to_be_visible()
    expect(page.locator("#planner-stopped")).to_contain_text("manage.py engine --curve")
    expect(page.locator("#planner-budget")).not_to_contain_text("under curve")
    assert page.evaluate(WIDE_PAGES) is None
    shot(page, f"planner-1k1k-375-{fixture}")

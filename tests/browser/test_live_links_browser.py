"""A card's Computed live numbers lead to where they were worked out, at the same settings."""

import pytest
from playwright.sync_api import Page, expect

from tests.browser.fields import type_and_leave
from tests.browser.waits import SIMULATION_WAIT_MS
from tests.conftest import SEED_CARD_URL

QUANTIZATION_STEP_1 = "/learn/llm-inference-performance/quantization/step-1/"


@pytest.fixture(autouse=True)
def _patient(page: Page) -> None:
    # The calculator and simulator pages load plotly: on a shared machine the load event can
    # take longer than the suite's default. Generous, not lucky.
    page.set_default_navigation_timeout(SIMULATION_WAIT_MS)
    page.set_default_timeout(30_000)


def live_row(page: Page, label: str):
    return page.locator(".live-table tr").filter(has=page.get_by_role("rowheader", name=label, exact=True))


def test_following_a_calculator_number_shows_the_same_number_at_the_same_settings(page: Page, live_lessons):
    page.goto(f"{live_lessons}{QUANTIZATION_STEP_1}?answer=shown")
    link = live_row(page, "Q8_0 ceiling at 546 GB/s (tok/s)").get_by_role("link")
    shown = link.inner_text()
    assert shown == "64.2"  # 546 ÷ 8.5 GB
    link.click()
    page.wait_for_url("**/sim/calc/decode-ceiling/?**#output-ceiling_tok_s")
    number = page.locator('td[data-key="ceiling_tok_s"]')
    expect(number).to_have_text(f"{shown} tok/s")
    expect(page.locator('select[name="quant"]')).to_have_value("q8_0")  # the set's, not the default
    # Where the student lands is marked, and the knobs turn from there.
    assert page.locator("#output-ceiling_tok_s").evaluate("row => row.matches(':target')")
    type_and_leave(page.locator('input[name="bandwidth_gbs"]'), "273")
    expect(number).to_have_text("32.1 tok/s")  # 273 ÷ 8.5 GB


def test_following_a_sweep_number_shows_the_same_number_in_the_simulator(page: Page, live_lessons):
    page.goto(f"{live_lessons}{SEED_CARD_URL.replace('step-1', 'step-2')}?answer=shown")
    link = live_row(page, "TTFT p95, 8 people (ms)").get_by_role("link")
    shown = link.inner_text()
    link.click()
    page.wait_for_url("**/sim/?**#sim-results")
    row = page.locator(".sweep-table tbody tr").filter(has=page.get_by_role("rowheader", name="8"))
    expect(row.locator("td").nth(4)).to_contain_text(shown)


def test_a_published_number_on_the_seed_card_is_the_course_s_run_with_nothing_to_follow(
    page: Page, live_lessons
):
    page.goto(f"{live_lessons}{SEED_CARD_URL}?answer=shown")
    # The row's header holds the label and the run's name.
    row = page.locator(".live-table tr").filter(has_text="Total, 8 people (tok/s)")
    expect(row.locator(".live-value")).to_have_text("275.1")
    expect(row).to_contain_text("Published, not computed")
    expect(page.locator(".layer-live")).to_contain_text("they are the course's published run")
    expect(row.get_by_role("link")).to_have_count(0)

"""The calculator pages in Chromium: drawn, redrawn in place, and usable without JavaScript."""

import pytest
from playwright.sync_api import Page, expect

from felab_sim.engine.calculators import CALCULATORS
from tests.browser.fields import type_and_leave
from tests.browser.waits import SIMULATION_WAIT_MS
from tests.support.calculators import typed_example


@pytest.fixture(autouse=True)
def _patient(page: Page, page_without_js: Page) -> None:
    # Ten of these pages load plotly each: on a machine shared by many test runs, waiting for a
    # page's load event can take longer than the suite's default 10 s. Generous, not lucky.
    for each in (page, page_without_js):
        each.set_default_navigation_timeout(SIMULATION_WAIT_MS)
        each.set_default_timeout(30_000)


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_calculator_draws_and_redraws_in_place(page: Page, live_server, name):
    # A worked example of the calculator's own module that changes one field from its default.
    param, example = typed_example(CALCULATORS[name])
    value, output = example.params[param], example.output
    page.goto(f"{live_server.url}/sim/calc/{name}/")
    plot = page.locator("#calc-results .plot")
    # Drawn on the server at once; plotly's interactive chart when the student asks for it.
    expect(plot.locator(".chart-svg").filter(visible=True)).to_have_count(1)
    expect(plot.locator(".chart-svg :is(polyline, rect)").filter(visible=True).first).to_be_visible()
    page.get_by_role("button", name="Explore this chart").click()
    expect(plot).to_have_attribute("data-drawn", "true")
    expect(plot.locator(".main-svg").first).to_be_visible()

    before = page.locator(f'td[data-key="{output}"]').inner_text()
    page.evaluate("window.__same_page = true")
    type_and_leave(page.locator(f'input[name="{param}"]'), value)
    page.wait_for_url(f"**{param}={value}**")
    expect(page.locator(f'td[data-key="{output}"]')).not_to_have_text(before)
    expect(page.locator(f'td[data-key="{output}"]')).to_have_text(example.shown)
    expect(page.locator("#calc-results .plot")).to_have_attribute("data-drawn", "true")
    assert page.evaluate("window.__same_page === true")  # htmx swapped the results in: no page load


def test_speculative_redraws_the_speedup_when_acceptance_changes(page: Page, live_server):
    page.goto(f"{live_server.url}/sim/calc/speculative/")
    speedup = page.locator('td[data-key="speedup"]')
    expect(speedup).to_have_text("2.4×")
    type_and_leave(page.get_by_label("Acceptance (α)"), "0.3")
    expect(speedup).to_have_text("1×")
    assert "acceptance=0.3" in page.url  # the view can be shared


def test_a_calculator_works_without_javascript(page_without_js: Page, live_server):
    page = page_without_js
    page.goto(f"{live_server.url}/sim/calc/kv-cache/")
    page.get_by_label("Context", exact=True).fill("131072")
    page.get_by_role("button", name="Compute").click()
    page.wait_for_url("**context_tokens=131072**")
    expect(page.locator('td[data-key="kv_mib_per_conversation"]')).to_have_text("16,384 MiB")
    expect(page.get_by_text("Chart: KV cache gigabytes against context length")).to_be_visible()


def test_a_bad_value_is_named_on_the_page(page: Page, live_server):
    page.goto(f"{live_server.url}/sim/calc/prefill/")
    type_and_leave(page.get_by_label("Cached tokens"), "9000")
    alert = page.locator("#calc-results [role=alert]")
    expect(alert).to_contain_text("Cached tokens must be at most prompt_tokens (8,000)")
    expect(page.locator("#calc-results .plot")).to_have_count(0)  # no stale chart beside the error


def test_the_dpo_page_reads_as_a_person_writes(page: Page, live_server):
    """Beta as "β" (not a capital beta, which reads as B), a tiny loss in scientific form,
    an error led once by its label with the number as given, and "lesson 06" in the list."""
    page.goto(f"{live_server.url}/sim/calc/dpo/?margin=600")
    expect(page.get_by_label("Beta (β)")).to_have_value("0.1")
    expect(page.locator("#output-scaled_margin th")).to_contain_text("β × margin")
    expect(page.locator("main")).not_to_contain_text("Β")  # U+0392, the capital beta
    expect(page.locator('td[data-key="loss"]')).to_have_text("8.8 × 10⁻²⁷")
    expect(page.locator('td[data-key="fade"]')).to_have_text("8.8 × 10⁻²⁷")
    expect(page.locator('td[data-key="gradient_weight"]')).to_have_text("8.8 × 10⁻²⁸")  # β 0.1 × fade
    listed = page.locator("li", has=page.get_by_role("link", name=CALCULATORS["prefix-cache"].title))
    expect(listed).to_contain_text("lesson 06")
    expect(listed).not_to_contain_text("lessons 06")

    page.goto(f"{live_server.url}/sim/calc/dpo/?beta=1000000000")
    alert = page.locator("#calc-results [role=alert]")
    expect(alert.locator("li")).to_have_text(
        "Beta (β) must be a number greater than 0 and at most 100 (got 1,000,000,000)"
    )


def test_on_a_phone_step_time_shows_what_a_4_bit_experts_prompt_costs(phone: Page, live_server):
    # A student sets gpt-oss-120b's MXFP4 experts on four H100s to an 8k prompt and reads the
    # arithmetic: the fitted factor on the grouped products, and the unpacking beside them.
    page = phone
    page.goto(f"{live_server.url}/sim/calc/step-time/")
    page.get_by_label("Model", exact=True).select_option("gpt-oss-120b")
    page.get_by_label("Hardware", exact=True).select_option("h100-sxm")
    page.get_by_label("Precision", exact=True).select_option("mxfp4")
    for label, value in (("Tensor parallel", "4"), ("Batch", "1"), ("Context", "0"), ("Prompt", "8192")):
        page.get_by_label(label, exact=True).fill(value)
    page.get_by_role("button", name="Compute").click()
    page.wait_for_url("**prompt_tokens=8192**")
    arithmetic = page.locator("tr", has=page.locator('td[data-key="compute_ms"]'))
    expect(arithmetic).to_contain_text("in the grouped expert products ÷ 132.5 TFLOP/s")
    expect(arithmetic).to_contain_text(
        "a 4-bit expert product at 0.2 × a BF16 product's rate, a factor fitted"
    )
    expect(arithmetic).to_contain_text("+ 0 ms: unpacking")
    expect(arithmetic).to_contain_text("only what outlasts them counts")
    expect(page.locator('td[data-key="compute_ms"]')).to_have_text("123.4 ms")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scroll

"""The chain page in Chromium at a phone's 375 px: a student asks "70B on one GPU?" and gets
each step with its link, with JavaScript (htmx redraws in place) and without (the plain form)."""

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_page
from tests.browser.fields import type_and_leave
from tests.browser.test_phone_layout_browser import WIDE_PAGES

PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True}


def _phone(browser: Browser, **options) -> Page:
    return new_page(browser, timeout_ms=30_000, **PHONE, **options)


@pytest.fixture
def phone(browser: Browser) -> Page:
    return _phone(browser)


@pytest.fixture
def phone_without_js(browser: Browser) -> Page:
    return _phone(browser, java_script_enabled=False)


def test_with_htmx_bf16_stops_the_chain_in_place_and_fp8_walks_it_again(phone: Page, live_server):
    phone.goto(f"{live_server.url}/sim/chain/")
    expect(phone.locator("#chain-verdict")).to_have_attribute("data-complete", "yes")
    expect(phone.locator(".chain-step")).to_have_count(9)
    assert phone.evaluate(WIDE_PAGES) is None
    phone.evaluate("window.__same_page = true")
    phone.get_by_label("Precision").select_option("bf16")
    phone.wait_for_url("**precision=bf16**")
    expect(phone.locator("#chain-verdict")).to_have_attribute("data-complete", "no")
    expect(phone.locator(".chain-step")).to_have_count(1)
    expect(phone.locator("#step-fit")).to_contain_text("tensor_parallel 2 would")
    assert phone.evaluate("window.__same_page === true")  # htmx swapped the results: no page load
    type_and_leave(phone.get_by_label("Tensor parallel"), "2")
    phone.wait_for_url("**tensor_parallel=2**")
    expect(phone.locator(".chain-step")).to_have_count(9)
    assert phone.evaluate(WIDE_PAGES) is None


def test_without_javascript_the_form_submits_a_bad_value_names_its_field_and_a_link_opens(
    phone_without_js: Page, live_server
):
    page = phone_without_js
    page.goto(f"{live_server.url}/sim/chain/")
    page.get_by_label("Peak users").fill("400")
    page.get_by_role("button", name="Walk the chain").click()
    page.wait_for_url("**peak_users=400**")
    expect(page.locator('#step-replicas [data-key="replicas"]')).to_have_text("12 replicas")
    # Custom hardware without its figures: the server's refusal names the field (the browser's own
    # range checks already stop a 0 in a number box before it is sent).
    page.get_by_label("Hardware", exact=True).select_option("custom")
    page.get_by_role("button", name="Walk the chain").click()
    expect(page.locator(".form-errors")).to_contain_text("GPU memory must be typed in for custom hardware")
    expect(page.get_by_label("GPU memory")).to_have_attribute("aria-invalid", "true")
    assert page.evaluate(WIDE_PAGES) is None
    page.get_by_label("Hardware", exact=True).select_option("h100-sxm")
    page.get_by_label("Peak users").fill("200")
    page.get_by_role("button", name="Walk the chain").click()
    decode = page.locator('#step-decode [data-key="decode"]').inner_text()
    page.locator("#step-decode a").click()
    page.wait_for_url("**/sim/calc/step-time/**")
    expect(page.locator('td[data-key="tok_s_per_user"]')).to_have_text(decode)


@pytest.mark.parametrize("fixture", ["phone", "phone_without_js"], ids=["htmx", "no JavaScript"])
def test_an_slo_near_the_ttft_says_how_long_a_measured_first_token_may_take(request, live_server, fixture):
    page = request.getfixturevalue(fixture)
    page.goto(f"{live_server.url}/sim/chain/")
    if fixture == "phone":
        type_and_leave(page.get_by_label("TTFT SLO"), "70")
    else:
        page.get_by_label("TTFT SLO").fill("70")
        page.get_by_role("button", name="Walk the chain").click()
    page.wait_for_url("**slo_ms=70**")
    verdict = page.locator("#chain-verdict")
    expect(verdict).to_contain_text("may miss the 70 ms SLO")
    expect(verdict).to_contain_text("measured, it may reach")
    # The decode speed is 1 ÷ a step: its band is the division's, lopsided, and fits the phone.
    band = page.locator('[data-expected="decode"]')
    expect(band).to_contain_text(" / +")
    box = band.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 375
    assert page.evaluate(WIDE_PAGES) is None

"""With a pasted config.json, on a phone, with and without JavaScript: a calculator's preset and a
chain's step keep the paste (they post the form, since no link can carry it), and what they open
shows the preset's values or the step's figure."""

import json

import pytest
from playwright.sync_api import Browser, Page, expect

from felab_sim.engine.course import chain
from felab_sim.engine.models.model_presets import preset
from tests.browser.conftest import new_page
from tests.browser.test_phone_layout_browser import WIDE_PAGES

PHONE = {"viewport": {"width": 375, "height": 700}, "is_mobile": True, "has_touch": True}
CONFIG = json.dumps(preset("gpt-oss-20b").config, indent=2)


@pytest.fixture(params=[True, False], ids=["htmx", "no JavaScript"])
def phone(request, browser: Browser) -> Page:
    return new_page(browser, timeout_ms=30_000, **PHONE, java_script_enabled=request.param)


def test_a_preset_keeps_the_pasted_config(phone: Page, live_server):
    phone.goto(f"{live_server.url}/sim/calc/decode-ceiling/")
    phone.get_by_label("Config.json").fill(CONFIG)
    phone.get_by_role("button", name="Compute").click()
    preset_button = phone.get_by_role("button", name="NVIDIA H100 SXM5 80GB")
    expect(preset_button).to_be_visible()
    preset_button.click()
    expect(phone.locator("#calc-settings [name=bandwidth_gbs]")).to_have_value("3350")
    expect(phone.get_by_label("Config.json")).to_have_value(CONFIG)
    assert "model_config" not in phone.url
    assert phone.evaluate(WIDE_PAGES) is None


def test_a_step_of_a_pasted_chain_opens_its_calculator_with_the_paste(phone: Page, live_server):
    phone.goto(f"{live_server.url}/sim/chain/")
    phone.get_by_label("Config.json").fill(CONFIG)
    phone.get_by_role("button", name="Walk the chain").click()
    step = chain.walk({"model_config": CONFIG}).step("kv_pool")
    button = phone.locator("#step-kv_pool").get_by_role("button")
    expect(button).to_be_visible()
    button.click()
    expect(phone.locator(f'td[data-key="{step.output}"]')).to_contain_text(step.text().split(" ")[0])
    expect(phone.get_by_label("Config.json")).to_have_value(CONFIG)
    assert "/sim/calc/kv-cache/" in phone.url or "/sim/chain/steps/kv_pool/" in phone.url
    assert "model_config" not in phone.url


# The quickest tap there is: the button pressed in the same moment the swap puts it on the page,
# before the browser draws again. A loaded phone gives a slow thumb the same window.
PRESS_ON_ARRIVAL = """(name) => {
    new MutationObserver((changes, observer) => {
        const button = [...document.querySelectorAll("#calc-presets button")].find((b) => b.textContent === name);
        if (!button) return;
        observer.disconnect();
        button.click();
        document.body.dataset.pressed = name;
    }).observe(document.body, {childList: true, subtree: true});
}"""


def test_a_preset_pressed_as_it_appears_still_applies(page: Page, live_server):
    page.goto(f"{live_server.url}/sim/calc/decode-ceiling/")
    page.get_by_label("Config.json").fill(CONFIG)
    page.evaluate(PRESS_ON_ARRIVAL, "NVIDIA H100 SXM5 80GB")
    page.get_by_role("button", name="Compute").click()
    expect(page.locator("body")).to_have_attribute("data-pressed", "NVIDIA H100 SXM5 80GB")
    expect(page.locator("#calc-settings [name=bandwidth_gbs]")).to_have_value("3350")
    expect(page.get_by_label("Config.json")).to_have_value(CONFIG)

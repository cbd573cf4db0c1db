"""A student pastes a model's config.json on the kv-cache page, on a phone: the KV cache by layer
kind appears, and nothing scrolls sideways."""

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from felab_sim.engine.model_presets import preset
from tests.browser.test_phone_layout_browser import WIDE_PAGES

PHONE = {"viewport": {"width": 320, "height": 640}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(**PHONE)
    context.set_default_timeout(30_000)
    context.set_default_navigation_timeout(60_000)
    yield context.new_page()
    context.close()


def test_a_pasted_config_shows_the_kv_cache_by_layer_kind_on_a_phone(phone: Page, live_server):
    page = phone
    page.goto(f"{live_server.url}/sim/calc/kv-cache/")
    # gpt-oss-20b's config as Hugging Face publishes it: 12 sliding (window 128) and 12 full layers.
    page.get_by_label("Config.json").fill(json.dumps(preset("gpt-oss-20b").config, indent=2))
    page.get_by_label("Context", exact=True).fill("32768")
    page.get_by_role("button", name="Compute").click()
    page.wait_for_url("**model_config=**")
    expect(page.locator('td[data-key="kv_bytes_per_token_full"]')).to_have_text("24,576 B")
    expect(page.locator('td[data-key="kv_bytes_per_token_sliding"]')).to_have_text("24,576 B")
    expect(page.locator('td[data-key="kv_bytes_per_token_mla"]')).to_have_text("0 B")
    expect(page.locator('td[data-key="kv_bytes_per_context_token"]')).to_have_text("24,672 B")
    # The config stays in the box, so the page's address shares it.
    expect(page.get_by_label("Config.json")).to_have_value(json.dumps(preset("gpt-oss-20b").config, indent=2))
    assert page.evaluate(WIDE_PAGES) is None


def test_a_config_felab_cannot_read_names_the_missing_field_on_the_page(phone: Page, live_server):
    config = dict(preset("Llama-3.1-8B").config)
    del config["num_key_value_heads"]
    phone.goto(f"{live_server.url}/sim/calc/kv-cache/")
    phone.get_by_label("Config.json").fill(json.dumps(config))
    phone.get_by_role("button", name="Compute").click()
    expect(phone.locator("#calc-results [role=alert]")).to_contain_text("num_key_value_heads: missing")

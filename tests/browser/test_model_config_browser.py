"""A student pastes a model's config.json or an engine's start-up log on the kv-cache page, on a
phone, with and without JavaScript: the paste is posted (an address holding it would be too long
for servers), the KV cache by layer kind and the engine's pool appear, and nothing scrolls sideways."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from felab_sim.engine.models.model_presets import preset
from tests.browser.conftest import new_page
from tests.browser.test_phone_layout_browser import WIDE_PAGES

PHONE = {"viewport": {"width": 320, "height": 640}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def phone(browser: Browser) -> Page:
    return new_page(browser, timeout_ms=30_000, **PHONE)


def test_a_pasted_config_shows_the_kv_cache_by_layer_kind_on_a_phone(phone: Page, live_server):
    page = phone
    page.goto(f"{live_server.url}/sim/calc/kv-cache/")
    # gpt-oss-20b's config as Hugging Face publishes it: 12 sliding (window 128) and 12 full layers.
    page.get_by_label("Config.json").fill(json.dumps(preset("gpt-oss-20b").config, indent=2))
    page.get_by_label("Context", exact=True).fill("32768")
    page.get_by_role("button", name="Compute").click()
    # The address keeps the short settings; the config travelled in the POST body.
    page.wait_for_url("**context_tokens=32768**")
    assert "model_config" not in page.url
    expect(page.locator('td[data-key="kv_bytes_per_token_full"]')).to_have_text("24,576 B")
    expect(page.locator('td[data-key="kv_bytes_per_token_sliding"]')).to_have_text("24,576 B")
    expect(page.locator('td[data-key="kv_bytes_per_token_mla"]')).to_have_text("0 B")
    expect(page.locator('td[data-key="kv_bytes_per_context_token"]')).to_have_text("24,672 B")
    # The config stays in the box.
    expect(page.get_by_label("Config.json")).to_have_value(json.dumps(preset("gpt-oss-20b").config, indent=2))
    assert page.evaluate(WIDE_PAGES) is None


def test_a_config_felab_cannot_read_names_the_missing_field_on_the_page(phone: Page, live_server):
    config = dict(preset("Llama-3.1-8B").config)
    del config["num_key_value_heads"]
    phone.goto(f"{live_server.url}/sim/calc/kv-cache/")
    phone.get_by_label("Config.json").fill(json.dumps(config))
    phone.get_by_role("button", name="Compute").click()
    expect(phone.locator("#calc-results [role=alert]")).to_contain_text("num_key_value_heads: missing")


# A vLLM start-up log of over 10,000 characters (tests/sim/test_posted_pastes.py): its KV lines say
# 26.43 GiB and 216,496 tokens.
VLLM_STARTUP = (Path(__file__).parent.parent / "data" / "vllm-startup-llama-3.1-8b.log").read_text()


@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "no JavaScript"])
def test_a_10_kb_vllm_log_is_posted_and_read(browser: Browser, live_server, javascript):
    page = new_page(browser, timeout_ms=30_000, **PHONE, java_script_enabled=javascript)
    try:
        page.goto(f"{live_server.url}/sim/calc/kv-cache/")
        page.get_by_label("Engine log").fill(VLLM_STARTUP)
        page.get_by_role("button", name="Compute").click()
        expect(page.locator('td[data-key="engine_kv_tokens"]')).to_have_text("216,496 tokens")
        expect(page.locator('td[data-key="engine"]')).to_have_text("vLLM")
        assert "engine_log" not in page.url and len(page.url) < 200
        if javascript:
            page.screenshot(path="/tmp/sec-posted-log-phone.png", full_page=False)
        assert page.evaluate(WIDE_PAGES) is None
    finally:
        page.close()

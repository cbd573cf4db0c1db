"""Pastes travel in a POST body with Django's CSRF token: a 10 KB vLLM start-up log or a config.json
reaches the kv-cache, chain and engine pages, with and without htmx, where an address that long
is refused by servers (gunicorn: 414 past 4,094 bytes); the address keeps the short settings."""

import json
import re
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

# A vLLM start-up log of an 8B model on one GPU as vLLM prints it, over 10,000 characters: its
# KV lines say 26.43 GiB, 216,496 tokens.
VLLM_STARTUP = (Path(__file__).parent.parent / "data" / "vllm-startup-llama-3.1-8b.log").read_text()
LLAMA_8B = json.dumps(
    {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "filler": "x" * 6000,  # a config as long as a multimodal model's, past what an address holds
    }
)


@pytest.fixture
def browser():
    """A client that checks CSRF tokens, as Django does for a browser's POST."""
    return Client(enforce_csrf_checks=True)


def token_of(page: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]


def post_form(client, url: str, data: dict, **headers):
    form_page = client.get(url).content.decode()
    assert re.search(r'<form [^>]*class="sim-form[^>]*method="post"', form_page)
    return client.post(url, {**data, "csrfmiddlewaretoken": token_of(form_page)}, headers=headers)


def test_a_10_kb_vllm_log_posted_without_javascript_is_read(browser):
    assert len(VLLM_STARTUP) > 10_000
    response = post_form(
        browser, "/sim/calc/kv-cache/", {"engine_log": VLLM_STARTUP, "context_tokens": "8192"}
    )
    body = response.content.decode()
    assert response.status_code == 200, body[:500]
    assert 'data-key="engine_kv_tokens">216,496 tokens' in body
    assert "At most 20,000 characters." in body  # the limit the page states


def test_a_posted_log_with_htmx_redraws_the_results_and_keeps_the_short_settings_in_the_address(browser):
    response = post_form(
        browser, "/sim/calc/kv-cache/", {"engine_log": VLLM_STARTUP, "users": "4"}, HX_Request="true"
    )
    assert response.status_code == 200
    assert 'data-key="engine_kv_tokens">216,496 tokens' in response.content.decode()
    assert response["HX-Push-Url"] == "/sim/calc/kv-cache/?users=4"


def test_a_post_without_the_csrf_token_is_refused(browser):
    assert browser.post("/sim/calc/kv-cache/", {"engine_log": VLLM_STARTUP}).status_code == 403


def test_a_log_over_20000_characters_is_refused_naming_it(browser):
    response = post_form(browser, "/sim/calc/kv-cache/", {"engine_log": VLLM_STARTUP * 2})
    assert response.status_code == 400
    assert "Engine log must be text" in response.content.decode()
    assert f"at most 20,000 characters (got a {len(VLLM_STARTUP * 2) - 1:,}-character string)" in (
        response.content.decode()
    )


def test_a_long_config_is_posted_to_the_chain_and_the_engine(browser):
    chain = post_form(browser, "/sim/chain/", {"model_config": LLAMA_8B})
    assert chain.status_code == 200 and 'id="step-fit"' in chain.content.decode()
    engine = post_form(
        browser, "/sim/engine/", {"model": "config", "model_config": LLAMA_8B}, HX_Request="true"
    )
    assert engine.status_code == 200 and 'id="engine-binding"' in engine.content.decode()
    assert engine["HX-Push-Url"] == "/sim/engine/?model=config"


def test_a_kept_calculator_page_gives_each_visitor_their_own_token(browser):
    first = browser.get("/sim/calc/roofline/").content.decode()
    second = Client(enforce_csrf_checks=True).get("/sim/calc/roofline/").content.decode()
    assert token_of(first) != token_of(second)
    assert "csrf-input-" not in first  # the kept page's mark is always filled


@pytest.mark.parametrize("url", ["/sim/calc/kv-cache/", "/sim/chain/", "/sim/engine/"])
def test_a_post_without_a_paste_and_without_javascript_goes_on_to_its_settings_address(browser, url):
    response = post_form(browser, url, {"tensor_parallel": "2", "model_config": " "})
    assert response.status_code == 303 and response["Location"] == f"{url}?tensor_parallel=2"

"""A paste (a config.json, a GPU's measurements, an engine's start-up log) is in a page's response
once at most, in its form: no link carries it, so a response stays a small multiple of its request.
A link holding the paste would repeat it once per link (an 88 KB paste came back as 6 MB) and be
refused as too long when followed. Where a link needs the paste, a button posts the form with it:
a calculator's presets, the chain's steps."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.test import Client

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.course import chain
from felab_sim.engine.course.presets import HARDWARE, presets_for
from felab_sim.engine.models.model_presets import preset as model_preset

pytestmark = pytest.mark.django_db

# In each paste once: counting it in a response counts the paste's copies.
MARK = "pastedq7mark"
LOG_MARK = "pastedq7log"
CALIBRATION_MARK = "pastedq7gpu"
ROOT = Path(__file__).parent.parent.parent
LLAMA_8B = dict(model_preset("Llama-3.1-8B").config)
# A config as long as the page takes (12,000 characters).
CONFIG = json.dumps({**LLAMA_8B, "comment": MARK + " " + "x" * 11_000})
_MEASURED = (ROOT / "felab_sim/engine/measured/h200.jsonl").read_text().strip() + "\n"
# A GPU's measurements repeated to 88 KB, the size of the paste in the report.
CALIBRATION = (
    json.dumps({"kind": "note", "text": CALIBRATION_MARK}) + "\n" + _MEASURED * (88_000 // len(_MEASURED))
)
_LOG = (ROOT / "tests/data/vllm-startup-llama-3.1-8b.log").read_text()
ENGINE_LOG = _LOG + f"\n{LOG_MARK}\n" + "# a line of the log\n" * ((19_500 - len(_LOG)) // 20)
PASTES = {"model_config": CONFIG, "calibration": CALIBRATION, "engine_log": ENGINE_LOG}

PASTING_CALCULATORS = [
    name for name, calculator in CALCULATORS.items() if any(param.is_long_text for param in calculator.params)
]


def pasted_settings(url: str) -> dict[str, str]:
    """Every paste the page takes, each as long as it may be."""
    if url == "/sim/engine/":
        return {"model": "config", "model_config": CONFIG}
    if url == "/sim/chain/":
        return {"model_config": CONFIG}
    calculator = CALCULATORS[url.split("/")[3]]
    return {param.name: PASTES[param.name] for param in calculator.params if param.is_long_text}


def post(client: Client, url: str, data: dict[str, str], **headers) -> tuple[int, object]:
    """The form of ``url``'s page (of the chain's for a step) posted as a browser posts it
    (urlencoded, with its CSRF token): the request body's length in bytes, and the response."""
    form_page = "/sim/chain/" if url.startswith("/sim/chain/") else url
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(form_page).content.decode())[
        1
    ]
    body = urlencode({**data, "csrfmiddlewaretoken": token})
    response = client.post(url, body, content_type="application/x-www-form-urlencoded", headers=headers)
    return len(body.encode()), response


@pytest.fixture
def browser():
    return Client(enforce_csrf_checks=True)


PAGES = [f"/sim/calc/{name}/" for name in PASTING_CALCULATORS] + ["/sim/chain/", "/sim/engine/"]


def test_the_pages_that_take_a_paste_are_the_ones_tested():
    assert PASTING_CALCULATORS == [
        "prefill",
        "decode-ceiling",
        "kv-cache",
        "roofline",
        "step-time",
        "continuous-batching",
    ]


@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
@pytest.mark.parametrize("url", PAGES)
def test_a_posted_paste_comes_back_once_at_most(browser, url, htmx):
    request_bytes, response = post(
        browser, url, pasted_settings(url), **({"HX-Request": "true"} if htmx else {})
    )
    body = response.content.decode()
    assert response.status_code == 200, body[:300]
    for mark in (MARK, LOG_MARK, CALIBRATION_MARK):
        assert body.count(mark) <= 1, mark  # in the form's text area, and in no link
    assert not re.search(r'href="[^"]*(model_config|calibration|engine_log)=', body)
    if url != "/sim/engine/":  # the engine's page is 110 KB before any paste: its ratio is its size's
        assert len(response.content) <= 5 * request_bytes, (len(response.content), request_bytes)


def test_a_paste_in_the_address_is_not_repeated_in_the_page_s_links(client):
    # A short config fits an address (a card's link may hold one); the page's links still leave it out.
    short = json.dumps({**LLAMA_8B, "comment": MARK})
    body = client.get("/sim/calc/kv-cache/", {"model_config": short}).content.decode()
    assert (
        body.split('<main id="main"')[1].count(MARK) == 1
    )  # in the form (the header's Log in comes back here)


def computed_text(name: str, settings: dict[str, object], key: str) -> str:
    return CALCULATORS[name].run(settings).outputs[key].text()


H100 = next(preset for preset in HARDWARE if preset.name == "NVIDIA H100 SXM5 80GB")


def test_a_preset_on_a_pasted_page_posts_the_form_and_keeps_the_paste(browser):
    pasted = {"model_config": CONFIG, "calibration": CALIBRATION}
    _, page = post(browser, "/sim/calc/decode-ceiling/", pasted)
    body = page.content.decode()
    assert (
        '<button type="submit" form="calc-settings" class="link-button" name="preset" '
        'value="NVIDIA H100 SXM5 80GB">NVIDIA H100 SXM5 80GB</button>'
    ) in body

    _, response = post(browser, "/sim/calc/decode-ceiling/", {**pasted, "preset": H100.name})
    body = response.content.decode()
    assert response.status_code == 200
    assert 'name="bandwidth_gbs" value="3350"' in body and body.count(MARK) == 1
    preset_values = next(
        values for preset, values in presets_for(CALCULATORS["decode-ceiling"]) if preset == H100
    )
    expected = computed_text("decode-ceiling", {**pasted, **preset_values}, "ceiling_tok_s")
    assert f'data-key="ceiling_tok_s">{expected}<' in body


def test_with_htmx_a_preset_redraws_the_form_too_and_the_address_keeps_the_short_settings(browser):
    _, response = post(
        browser, "/sim/calc/kv-cache/", {"model_config": CONFIG, "preset": "Qwen2.5-7B"}, HX_Request="true"
    )
    body = response.content.decode()
    assert response["HX-Retarget"] == "#main" and response["HX-Reswap"] == "innerHTML"
    assert '<form id="calc-settings"' in body and body.count(MARK) == 1
    assert response["HX-Push-Url"] == "/sim/calc/kv-cache/?layers=28&kv_heads=4"


def test_a_preset_posted_without_a_paste_goes_on_to_its_settings_address(browser):
    _, response = post(
        browser, "/sim/calc/kv-cache/", {"model_config": "", "users": "4", "preset": "Qwen2.5-7B"}
    )
    assert response.status_code == 303
    assert response["Location"] == "/sim/calc/kv-cache/?users=4&layers=28&kv_heads=4"


def shown_output(page: str, output: str) -> str:
    row = re.search(rf'<td class="calc-value" data-key="{output}">(.*?)</td>', page)
    assert row, output
    return html.unescape(row.group(1)).replace("$", "").split(" ")[0]


def test_each_step_of_a_pasted_chain_opens_its_calculator_with_the_paste_showing_the_same_value(
    browser, client
):
    _, page = post(browser, "/sim/chain/", {"model_config": CONFIG})
    body = page.content.decode()
    walked = chain.walk({"model_config": CONFIG})
    assert walked.complete
    posted = 0
    for step in walked.steps:
        if step.calculator_params.get("model_config"):
            # The step's calculator reads the paste: its button posts the chain's form on to it.
            assert f'formaction="/sim/chain/steps/{step.key}/#output-{step.output}"' in body
            _, response = post(browser, f"/sim/chain/steps/{step.key}/", {"model_config": CONFIG})
            assert response.status_code == 200, step.key
            opened = response.content.decode()
            assert opened.count(MARK) == 1  # in the calculator's form, posted on from there
            posted += 1
        else:
            # The chain worked out what the calculator needs (a parameter count): a plain link.
            link = re.search(rf'<li id="step-{step.key}".*?<a href="([^"]+)">', body, re.S)[1]
            opened = client.get(html.unescape(link).split("#")[0]).content.decode()
        # The page's figure is the step's (the pool's tokens are kv-cache's one-token conversations).
        assert shown_output(opened, step.output) == step.text().replace("$", "").split(" ")[0], step.key
    assert posted >= 3


def test_with_htmx_a_chain_step_replaces_the_page_with_its_calculator(browser):
    _, response = post(browser, "/sim/chain/steps/kv_pool/", {"model_config": CONFIG}, HX_Request="true")
    body = response.content.decode()
    assert response["HX-Retarget"] == "#main" and response["HX-Reswap"] == "innerHTML"
    assert '<form id="calc-settings"' in body and body.count(MARK) == 1
    assert response["HX-Push-Url"].startswith("/sim/calc/kv-cache/?")
    assert "model_config" not in response["HX-Push-Url"]


def test_a_step_the_chain_does_not_reach_shows_the_chain(browser):
    # 8 GB holds no 8B model in BF16: the chain stops at its first step.
    stopped = {"model_config": CONFIG, "precision": "bf16", "hardware": "rtx-4090", "memory_gb": "8"}
    _, response = post(browser, "/sim/chain/steps/decode/", stopped)
    body = response.content.decode()
    assert 'id="chain-verdict"' in body and body.count(MARK) == 1
    assert [key for key in re.findall(r'<li id="step-(\w+)"', body)] == ["fit"]
    _, moved = post(browser, "/sim/chain/steps/decode/", {**stopped, "model_config": ""})
    assert moved.status_code == 303
    assert moved["Location"] == "/sim/chain/?precision=bf16&hardware=rtx-4090&memory_gb=8"

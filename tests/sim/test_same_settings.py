"""The serving pages (step-time, the engine, the chain) open at one scenario, link to each other
at the same settings, and say where their figures differ because their workloads do."""

from __future__ import annotations

import html
import re

import pytest

from felab_sim.engine.core.numbers import format_with_unit

pytestmark = pytest.mark.django_db

SHARED = ("model", "hardware", "precision")


def test_step_time_the_engine_and_the_chain_open_with_the_same_model_gpu_and_precision(client):
    step = client.get("/sim/calc/step-time.json").json()["params"]
    engine = client.get("/sim/engine.json").json()["params"]
    walked = client.get("/sim/chain.json").json()["params"]
    assert {name: step[name] for name in SHARED} == {name: engine[name] for name in SHARED}
    assert {name: engine[name] for name in SHARED} == {name: walked[name] for name in SHARED}
    # The engine's requests are the chain's conversations: the same prompt and reply.
    assert (engine["input_tokens"], engine["output_tokens"]) == (
        walked["prompt_tokens"],
        walked["reply_tokens"],
    )
    assert engine["max_num_seqs"] == walked["max_num_seqs"]
    assert engine["gpu_memory_utilization"] == walked["memory_utilization"]


def link(body: str, anchor: str) -> str:
    """The first address after ``anchor`` in the page."""
    start = body.rindex("<", 0, body.index(anchor))  # the tag that holds it, which may be the link
    return html.unescape(re.search(r'href="([^"]+)"', body[start:]).group(1))


def as_json(url: str) -> str:
    page, _, query = url.partition("?")
    return page.rstrip("/") + ".json" + (f"?{query}" if query else "")


def test_the_engine_page_links_step_time_and_the_chain_at_its_settings_and_says_why_its_tpot_differs(client):
    query = {"model": "Llama-3.1-8B", "hardware": "h100-sxm", "precision": "bf16", "requests": "40"}
    body = client.get("/sim/engine/", query).content.decode()
    engine = client.get("/sim/engine.json", query).json()
    alone_url = link(body, 'id="engine-decode-alone"').split("#")[0]
    alone = client.get(as_json(alone_url)).json()
    assert {name: alone["params"][name] for name in SHARED} == {name: query[name] for name in SHARED}
    sentence = re.sub(r"<[^>]+>", "", body[body.index('id="engine-decode-alone"') :].split("</p>")[0])
    assert f"takes {format_with_unit(alone['outputs']['step_ms']['value'], 'ms')}" in sentence
    assert f"mean TPOT is {format_with_unit(engine['summary']['tpot_mean_ms'], 'ms')}" in sentence
    assert "prefilled in the same steps as the running decodes" in sentence
    # The fixed cost a step, one figure on both pages, with what vLLM's own part of it is.
    fixed = alone["outputs"]["fixed_ms"]
    assert html.unescape(fixed["formula"]) in html.unescape(body)
    assert "fitted on the three measured runs at 0 ms" in body
    # The chain at the engine's model, GPU, precision and request size.
    walked = client.get(as_json(link(body, 'id="link-chain"'))).json()["params"]
    assert {name: walked[name] for name in SHARED} == {name: query[name] for name in SHARED}
    assert (walked["prompt_tokens"], walked["reply_tokens"]) == (
        engine["params"]["input_tokens"],
        engine["params"]["output_tokens"],
    )


def test_the_chain_links_the_engine_at_its_users_and_step_time_links_both(client):
    body = client.get("/sim/chain/").content.decode()
    walked = client.get("/sim/chain.json").json()
    users = next(s for s in walked["steps"] if s["key"] == "decode")["url"]
    engine = client.get(as_json(link(body, 'id="chain-engine-link"'))).json()["params"]
    assert {name: engine[name] for name in SHARED} == {name: walked["params"][name] for name in SHARED}
    assert engine["workload"] == "concurrency" and f"batch={engine['concurrency']}" in users
    assert "prefilled in the same steps" in body
    step = client.get("/sim/calc/step-time/", {"model": "Llama-3.1-8B", "batch": "8"}).content.decode()
    to_engine = client.get(as_json(link(step, 'id="calc-other-pages"'))).json()["params"]
    assert (to_engine["model"], to_engine["hardware"], to_engine["concurrency"]) == (
        "Llama-3.1-8B",
        "h100-sxm",
        8,
    )
    links = re.findall(r'href="([^"]+)"', step[step.index('id="calc-other-pages"') :].split("</p>")[0])
    assert any(url.startswith("/sim/chain/") and "model=Llama-3.1-8B" in html.unescape(url) for url in links)


def test_a_gpu_step_time_does_not_offer_still_runs_on_the_engine_page_without_its_comparison(client):
    # The DGX Spark publishes no dense BF16 peak: the engine takes a typed one, step-time has no such GPU.
    query = {"model": "Llama-3.1-8B", "hardware": "dgx-spark", "peak_tflops": "100", "requests": "12"}
    response = client.get("/sim/engine/", query)
    body = response.content.decode()
    assert response.status_code == 200 and 'id="engine-binding"' in body
    assert 'id="engine-decode-alone"' not in body and 'id="link-chain"' in body

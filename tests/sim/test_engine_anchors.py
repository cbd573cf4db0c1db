"""The three measured vLLM runs (felab_sim/engine/serving/anchor_runs.json) and /sim/engine/
drawing them over felab's run when its settings are one of them.

The file is derived by ``bench/bench_engine.py --export-anchors`` from LLMServingSim's
repository; with FELAB_LLMSERVINGSIM pointing at a checkout (or bare clone) the tests below
also derive it again and compare, and compare bench_engine's own figures with the page's."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from django.utils.html import escape

from felab_sim.engine.hardware.hardware import hardware_preset
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving.anchors import (
    MEASURED_KEYS,
    anchor_file,
    anchor_runs,
    bundled_trace,
    derive,
)
from felab_sim.engine.serving.engine_params import anchor_for, engine_inputs, parse_engine_values
from felab_sim.engine.serving.simulate import simulate
from felab_sim.engine.sweep.limits import ENGINE_WEB_LIMITS
from tests.support.engine_runs import ON_A_4090

ROOT = Path(__file__).resolve().parents[2]
URL, JSON_URL = "/sim/engine/", "/sim/engine.json"
# The settings that repeat each run on the page: the form's names, the defaults left out.
QUERIES = {
    "RTX4090/Llama-3.1-8B": {**ON_A_4090, "workload": "trace"},
    "RTXPRO6000/Llama-3.1-8B": {
        **ON_A_4090,
        "workload": "trace",
        "hardware": "rtx-pro-6000",
        "max_num_seqs": "128",
    },
    "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507": {
        **ON_A_4090,
        "workload": "trace",
        "model": "Qwen3-30B-A3B",
        "hardware": "rtx-pro-6000",
        "max_num_seqs": "128",
        "data_parallel": "2",
        "expert_parallel": "on",
    },
}
# Issue 24's table of measured means: TTFT s, TPOT ms, latency s, total s (as the issue rounds them).
ISSUE_TABLE = {
    "RTX4090/Llama-3.1-8B": (65.5, 32.4, 86.6, 183.6),
    "RTXPRO6000/Llama-3.1-8B": (7.1, 32.5, 28.2, 65.9),
    "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507": (1.09, 47.3, 32.3, 64.0),
}


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text else 0


@pytest.mark.parametrize("folder", list(ISSUE_TABLE))
def test_the_committed_means_are_the_issues_table(folder):
    run = next(run for run in anchor_runs() if run.spec.folder == folder)
    ttft, tpot, latency, total = ISSUE_TABLE[folder]
    summary = run.summary
    for stated, computed in (
        (ttft, summary["ttft_mean_ms"] / 1000),
        (tpot, summary["tpot_mean_ms"]),
        (latency, summary["latency_mean_ms"] / 1000),
        (total, summary["total_s"]),
    ):
        assert round(computed, _decimals(stated)) == stated
    assert len(run.trace) == 300 and run.trace[0].arrival == 0.0
    # Output throughput is the trace's output tokens over the total time: the two agree.
    output = sum(request.output_tokens for request in run.trace)
    assert summary["output_tok_s"] == pytest.approx(output / summary["total_s"])


def test_the_committed_curves_show_what_limits_each_run():
    by_folder = {run.spec.folder: run for run in anchor_runs()}
    rtx4090 = by_folder["RTX4090/Llama-3.1-8B"]
    assert rtx4090.kv_tokens == 41_408 and max(rtx4090.timeseries["running"]) == 49
    assert max(rtx4090.timeseries["kv_pct"]) == 100.0
    assert max(by_folder["RTXPRO6000/Llama-3.1-8B"].timeseries["running"]) == 128
    qwen = by_folder["RTXPRO6000/Qwen3-30B-A3B-Instruct-2507"].timeseries
    assert (max(qwen["running"]), max(qwen["waiting"])) == (256, 37)
    for run in anchor_runs():
        assert len({len(values) for values in run.timeseries.values()}) == 1  # one row a second


def test_the_file_names_its_source_and_licence():
    source = anchor_file()["source"]
    assert source["repository"] == "github.com/casys-kaist/LLMServingSim"
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert source["licence"] == "MIT" and source["copyright"] == "Copyright (c) 2024, CASYS Lab at KAIST"
    assert source["copyright"] in source["licence_text"] and "MIT License" in source["licence_text"]
    assert len(source["files"]) == 9 and all("/vllm/" in name for name in source["files"])


def test_each_model_and_gpu_runs_the_trace_as_its_run_sent_it():
    rtx4090, pro6000, qwen = anchor_runs()
    assert bundled_trace("Llama-3.1-8B", "rtx-4090") == rtx4090.trace
    assert bundled_trace("Llama-3.1-8B", "rtx-pro-6000") == pro6000.trace
    assert bundled_trace("Qwen3-30B-A3B", "rtx-pro-6000") == qwen.trace
    assert bundled_trace("Qwen3-30B-A3B", "h100-sxm") == qwen.trace  # its tokens, on another GPU
    assert bundled_trace("Llama-3.1-70B", "h100-sxm") == rtx4090.trace
    # The same prompts, counted by another tokenizer; the same requests, sent a few ms apart.
    assert qwen.trace[0].prompt_tokens != rtx4090.trace[0].prompt_tokens
    assert [r.prompt_tokens for r in pro6000.trace] == [r.prompt_tokens for r in rtx4090.trace]
    assert pro6000.trace[1].arrival != rtx4090.trace[1].arrival


def _felab_summary(run) -> dict[str, float]:
    shape, hardware = preset(run.spec.model).shape, hardware_preset(run.spec.hardware)
    return simulate(list(run.trace), shape, hardware, run.settings).summary


@pytest.mark.django_db
@pytest.mark.parametrize("folder", list(QUERIES))
def test_the_page_puts_the_measured_run_beside_felabs(client, folder):
    run = next(run for run in anchor_runs() if run.spec.folder == folder)
    data = client.get(JSON_URL, QUERIES[folder]).json()
    felab = _felab_summary(run)
    for key in MEASURED_KEYS:
        assert data["summary"][key] == pytest.approx(felab[key], rel=1e-12)
        assert data["measured"]["summary"][key] == run.summary[key]
        assert data["measured"]["error"][key] == pytest.approx(felab[key] / run.summary[key] - 1)
    assert data["measured"]["run"] == folder and len(data["measured"]["timeseries"]) == len(
        run.timeseries["t"]
    )

    body = client.get(URL, QUERIES[folder]).content.decode()
    assert f'data-run="{folder}"' in body and escape(run.where) in body
    measured = re.search(r'data-measured="tpot_mean_ms">([^<]+)<', body).group(1)
    assert measured == f"{run.summary['tpot_mean_ms']:.1f} ms"
    # The no-JS chart draws the measured curves too: their names are in the SVG's legend.
    svg = re.search(r"<svg[^>]*>.*?</svg>", body[body.index('data-figure="engine-timeseries"') :], re.S)
    assert svg and "measured running" in svg.group() and "measured waiting" in svg.group()


@pytest.mark.django_db
def test_the_4090_runs_error_and_pool_are_printed(client):
    body = client.get(URL, QUERIES["RTX4090/Llama-3.1-8B"]).content.decode()
    assert 'data-measured="kv_tokens">41,408 tokens<' in body
    assert 'data-measured="ttft_mean_ms">65.5 s<' in body
    assert re.search(r'data-error="ttft_mean_ms">[+−-][0-9.]+%<', body)
    assert "measured KV (%)" in body  # the 4090's log has KV%; the RTX PRO 6000 runs' do not


@pytest.mark.django_db
def test_a_run_that_logged_no_kv_says_so(client):
    body = client.get(URL, QUERIES["RTXPRO6000/Llama-3.1-8B"]).content.decode()
    assert "a metric it did not record" in body and "measured KV (%)" not in body
    assert 'data-measured="kv_tokens">not recorded<' in body


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        {"max_num_seqs": "64"},  # another engine setting
        {"memory_gb": "48"},  # a figure typed over the preset
        {"workload": "rate", "requests": "20", "output_tokens": "16"},  # not the trace
    ],
)
def test_other_settings_show_no_measured_run(client, change):
    query = {**QUERIES["RTX4090/Llama-3.1-8B"], **change}
    values = parse_engine_values(query)
    assert anchor_for(values, engine_inputs(values)) is None
    response = client.get(JSON_URL, query)
    data = response.json()
    if values["workload"] == "trace":  # not stored, so simulated, and over the web's cap
        assert response.status_code == 400 and data["error"]["param"] == "workload"
    else:
        assert response.status_code == 200 and "summary" in data
    assert "measured" not in data
    body = client.get(URL, {**QUERIES["RTX4090/Llama-3.1-8B"], **change}).content.decode()
    assert 'id="engine-anchor"' not in body and "data-measured=" not in body


@pytest.mark.django_db
def test_the_trace_is_not_held_to_the_request_cap(client):
    response = client.get(JSON_URL, {**QUERIES["RTX4090/Llama-3.1-8B"], "requests": "5000"})
    assert response.status_code == 200 and len(response.json()["requests"]) == 300


@pytest.mark.django_db
@pytest.mark.parametrize("seqs", ["1", "32"])
def test_a_trace_not_a_measured_runs_is_over_the_web_budget_and_names_the_workload(client, seqs):
    # Only the three measured runs' settings are stored (tests/sim/test_anchor_felab.py); the
    # trace's 300 requests at any other settings cost more than the web's cap.
    response = client.get(JSON_URL, {"workload": "trace", "max_num_seqs": seqs})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "workload" and "manage.py engine --trace" in error["message"]
    assert f"{ENGINE_WEB_LIMITS.run_work:,.0f} units" in error["message"]


# With the source at hand: the file is what the script derives, and bench_engine's figures are the page's.
SOURCE = os.environ.get("FELAB_LLMSERVINGSIM")
needs_source = pytest.mark.skipif(not SOURCE, reason="FELAB_LLMSERVINGSIM is not set (bench/bench_engine.py)")


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_engine

    source = bench_engine.Source(Path(SOURCE or "."))
    return bench_engine, [bench_engine.load(source, spec) for spec in bench_engine.ANCHORS]


@needs_source
def test_the_committed_file_is_what_the_script_derives(bench):
    _, anchors = bench
    entries = {entry["folder"]: entry for entry in anchor_file()["runs"]}
    for anchor in anchors:
        derived = derive(anchor.run, anchor.rows, anchor.meta, anchor.timeseries)
        # The felab section is felab's own run, checked against the engine by test_anchor_felab.py.
        measured = {key: value for key, value in entries[anchor.run.folder].items() if key != "felab"}
        assert measured == derived


@needs_source
def test_bench_engines_figures_are_the_pages(bench):
    bench_engine, anchors = bench
    by_folder = {run.spec.folder: run for run in anchor_runs()}
    for anchor in anchors:
        errors = bench_engine.errors(anchor, bench_engine.run_engine(anchor)[0])
        run = by_folder[anchor.run.folder]
        felab = _felab_summary(run)
        for key, (measured, bench_felab, error) in errors.items():
            assert measured == pytest.approx(run.summary[key], rel=1e-12)
            assert bench_felab == pytest.approx(felab[key], rel=1e-12)
            assert error == pytest.approx(run.errors(felab)[key], rel=1e-9)


def _lesson_14_card(step: int) -> dict:
    import yaml

    from lessons.content_format import CONTENT_DIR

    path = CONTENT_DIR / "llm-inference-performance" / "lesson-14-spark-track.yaml"
    return next(card for card in yaml.safe_load(path.read_text())["cards"] if card["step"] == step)


def test_lesson_14s_kv_card_quotes_the_measured_runs_as_the_file_holds_them():
    by_folder = {run.spec.folder: run for run in anchor_runs()}
    rtx4090, pro6000 = by_folder["RTX4090/Llama-3.1-8B"], by_folder["RTXPRO6000/Llama-3.1-8B"]
    text = _lesson_14_card(6)["real_numbers"]
    blocks = rtx4090.kv_tokens // rtx4090.settings.block_size
    assert f"{rtx4090.kv_tokens:,} tokens ({blocks:,} blocks of {rtx4090.settings.block_size})" in text
    running, waiting = max(rtx4090.timeseries["running"]), max(rtx4090.timeseries["waiting"])
    assert f"at most {running} requests running" in text and f"{waiting} waiting at the peak" in text
    assert max(rtx4090.timeseries["kv_pct"]) == 100.0 and "every KV block in use" in text
    summary = rtx4090.summary
    assert f"first token after {summary['ttft_mean_ms'] / 1000:.1f} s" in text
    assert f"then {summary['tpot_mean_ms']:.1f} ms a token" in text
    assert f"all 300 done in {summary['total_s']:.1f} s" in text
    assert f"{max(pro6000.timeseries['running'])} running, its max_num_seqs" in text
    assert pro6000.settings.max_num_seqs == 128
    assert f"first token after {pro6000.summary['ttft_mean_ms'] / 1000:.1f} s on average" in text


# llama.cpp's benches/dgx-spark.md (ggml-org/llama.cpp), Qwen2.5-Coder-7B Q8_0, llama-batched-bench
# PP 512, TG 32: S_TG t/s, every stream's tokens together, at each batch B.
LLAMA_CPP_SPARK_S_TG = {1: 29.24, 2: 54.46, 4: 104.33, 8: 195.67, 16: 335.01, 32: 593.27}


def test_lesson_14s_spark_card_and_its_parameter_sets_quote_llama_cpps_bench():
    import yaml

    from lessons.content_format import CONTENT_DIR

    text = _lesson_14_card(7)["real_numbers"]
    sets = {
        entry["slug"]: entry for entry in yaml.safe_load((CONTENT_DIR / "parameter_sets.yaml").read_text())
    }
    for batch, total in LLAMA_CPP_SPARK_S_TG.items():
        each = round(total / batch, 2)
        params = sets[f"l14-spark-llamacpp-7b-q8-b{batch}"]["params"]
        assert params["measured_tok_s"] == each and params.get("batch", 1) == batch
        assert params["context_tokens"] == 512 + 32 // 2  # the prompt, then half the 32 generated
        assert (
            params["kv_bytes_per_token"] == 2 * 28 * 4 * 128 * 2
        )  # K and V, 28 layers, 4 heads of 128, 16-bit
        if batch == 1:
            assert f"1 stream: measured {total} tokens per second" in text
        else:
            assert f"{batch} streams: {total} in total, {each} each" in text

"""felab's engine run as each published serving run was run (felab_sim/engine/serving/serving_validation.py)."""

import json
import math

import pytest

from felab_sim.engine.serving import serving_validation as sv
from felab_sim.engine.serving.serving_runs import FIT, PREDICT, runs, split

BY_ID = {run.run_id: run for run in runs()}
# The cheapest run of each engine on each GPU and of each NIM model, each well under a second,
# and one whose KV pool binds (about 2.5 s), so a change to a GPU's memory shows here too.
RERUN = (
    "ix-vllm-h100-gptoss-tp4-1k1k-c4",
    "ix-vllm-b200-gptoss-tp4-8k1k-c4",
    "ix-sglang-h200-dsr1-tp8-8k1k-c4",
    "ix-sglang-mi300x-dsr1-tp8-1k1k-c4",
    "nim-h100-llama70b-tp2-5k500-c1",
    "nim-h100-llama8b-tp1-200-200-c5",
    "ix-sglang-h200-dsr1-tp8-8k1k-c64",
)


def test_every_run_has_felabs_stored_figures():
    stored = sv.stored_predictions()
    assert set(stored) == set(BY_ID)
    for figures in stored.values():
        assert set(figures) >= {"ttft_mean_ms", "tpot_mean_ms", "output_tok_s_per_gpu", "total_tok_s_per_gpu"}


@pytest.mark.parametrize("run_id", RERUN)
def test_the_stored_figures_are_the_engines_own(run_id):
    assert sv.predict(BY_ID[run_id]) == sv.stored_predictions()[run_id]


def test_an_inferencex_run_is_run_as_its_client_runs_it():
    run = BY_ID["ix-vllm-h200-gptoss-tp4-8k1k-c16"]
    found = sv.setup(run)
    assert len(found.sizes) == run.request_count == 160
    assert found.closed_loop == sv.ClosedLoop(16, 160)
    prompts = [size.prompt_tokens for size in found.sizes]
    outputs = [size.output_tokens for size in found.sizes]
    assert min(prompts) >= math.floor(0.8 * 8192) and max(prompts) <= 8192
    assert min(outputs) >= math.floor(0.8 * 1024) and max(outputs) <= 1024
    assert len(set(prompts)) > 100  # drawn, not one length repeated
    assert all(size.arrival == 0 for size in found.sizes)  # queued at once: the closed loop paces them
    assert found.sizes == sv.setup(run).sizes  # the same draw every time
    settings = found.settings
    assert (settings.max_num_seqs, settings.max_num_batched_tokens) == (16, 8192)
    assert settings.tensor_parallel == 4 and not settings.prefix_caching
    sglang = sv.setup(BY_ID["ix-sglang-b200-dsr1-tp8-1k1k-c64"])
    assert len(sglang.sizes) == 3200  # 50 × C on B200
    assert (sglang.settings.max_num_seqs, sglang.settings.max_num_batched_tokens) == (128, 32768)
    assert sglang.settings.kv_bytes_per_value == 1.0  # fp8_e4m3 KV on B200
    # Its script polls for requests every 30 decode steps from concurrency 16, every 10 below.
    assert sglang.server.recv_interval == 30 and sglang.server.prefill_first
    assert sv.setup(BY_ID["ix-sglang-b200-dsr1-tp8-1k1k-c4"]).server.recv_interval == 10
    assert sv.setup(BY_ID["ix-sglang-h200-dsr1-tp8-1k1k-c16"]).server.recv_interval == 1
    assert not found.server.prefill_first and found.server.graph_sizes[-1] == 2048


def test_a_nim_run_says_what_felab_assumed():
    found = sv.setup(BY_ID["nim-h100-llama70b-tp2-5k500-c25"])
    assert found.hardware.name == "h100-sxm"
    assert len(found.sizes) == 250 and {(s.prompt_tokens, s.output_tokens) for s in found.sizes} == {
        (5000, 500)
    }
    assert any("H100 SXM" in note for note in found.notes)
    assert any("request count" in note for note in found.notes)
    # NIM's optimized profiles are TensorRT-LLM engines: the stand-in engine is named as one.
    assert any("run as vLLM" in note and "TensorRT-LLM" in note for note in found.notes)


def test_throughput_per_gpu_is_the_runs_tokens_over_its_wall_time_over_its_gpus():
    run = BY_ID["nim-h100-llama70b-tp2-5k500-c1"]
    result = sv.simulate_run(run)
    figures = sv.predicted_figures(run, result)
    wall = max(r.last_token_ts for r in result.requests) - min(r.queued_ts for r in result.requests)
    assert figures["output_tok_s_per_gpu"] == pytest.approx(10 * 500 / wall / 2)
    assert figures["total_tok_s_per_gpu"] == pytest.approx(10 * 5500 / wall / 2)


def test_the_summary_is_the_median_and_90th_percentile_of_each_groups_absolute_errors():
    run = BY_ID["nim-h100-llama70b-tp2-5k500-c1"]
    made_up = [
        sv.ServingPoint(run, PREDICT, "tpot_mean_ms", "mean TPOT", "mean TPOT", 100.0, 100.0 + e, ())
        for e in (-30, 1, 2, -4, 5, 6, 7, 8, 9, 10)
    ]
    made_up.append(sv.ServingPoint(run, FIT, "tpot_mean_ms", "mean TPOT", "mean TPOT", 100.0, 50.0, ()))
    (fit, predict) = sv.summaries(made_up)
    assert (fit.group, fit.runs, fit.median, fit.p90) == (FIT, 1, 0.5, 0.5)
    assert predict.group == PREDICT and predict.runs == 10
    assert predict.median == pytest.approx(0.065) and predict.p90 == pytest.approx(0.10)
    assert predict.floors == (0.08, 0.20) and predict.met  # 6.5% ≤ 8%, 10% ≤ 20%
    assert not fit.met  # 50% is past both


def test_the_table_covers_both_groups_and_both_kinds_of_model():
    found = {(s.group, s.models, s.metric) for s in sv.summaries()}
    for group in (FIT, PREDICT):
        for models in ("dense", "MoE"):
            for key, *_ in sv.METRICS:
                assert (group, models, key) in found
    predicted = {p.run.run_id for p in sv.serving_points() if p.group == PREDICT}
    assert len(predicted) >= 25
    assert all(split()[run_id] == PREDICT for run_id in predicted)


def test_the_stored_file_round_trips_exactly():
    stored = sv.stored_predictions()
    assert json.loads(sv.export_predictions(stored)) == stored

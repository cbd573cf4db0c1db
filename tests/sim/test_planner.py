"""The planner's curve (felab_sim/engine/serving/planner.py), without Django: its levels, its budget, what
it reads off each level at the user's targets, the measured runs it puts beside it."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from felab_sim.engine.hardware.prices import price
from felab_sim.engine.serving.engine_params import engine_inputs, parse_engine_values
from felab_sim.engine.serving.planner import (
    Curve,
    Level,
    Targets,
    best_sentence,
    curve_command,
    figure_errors,
    levels_up_to,
    parse_planner_values,
    plan,
    planned,
    request_sizes,
    requests_at,
    runs_at,
    share_text,
    simulate_curve,
)
from felab_sim.engine.serving.run_results import RequestResult
from felab_sim.engine.serving.servers import vllm_server
from felab_sim.engine.serving.serving_runs import FIT, runs, split
from felab_sim.engine.serving.serving_validation import REQUESTS_PER_CONCURRENCY
from felab_sim.engine.serving.simulate import ClosedLoop, simulate
from felab_sim.engine.serving.validation import engine_expected_errors

SMALL = {
    "model": "Llama-3.1-8B",
    "hardware": "h200",
    "precision": "bf16",
    "input_tokens": 128,
    "output_tokens": 32,
}
DEEPSEEK = {
    "model": "DeepSeek-V3",
    "hardware": "h200",
    "precision": "fp8",
    "tensor_parallel": 8,
    "input_tokens": 1024,
    "output_tokens": 1024,
}


def inputs_for(settings: dict):
    values = parse_engine_values(settings)
    return values, engine_inputs(values)


def request(number: int, ttft_s: float, tpot_s: float, output: int = 11) -> RequestResult:
    """A finished request of ``output`` tokens with the given TTFT and TPOT, queued at 0."""
    return RequestResult(number, 100, output, 0.0, 0.0, ttft_s, ttft_s + tpot_s * (output - 1), 0, 0)


def test_the_levels_are_powers_of_two_up_to_the_top_and_the_top_itself():
    assert levels_up_to(256) == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    assert levels_up_to(100) == (1, 2, 4, 8, 16, 32, 64, 100)
    assert levels_up_to(1) == (1,)


def test_lengths_are_drawn_from_80_to_100_percent_the_same_every_time():
    sizes = request_sizes(1000, 50, 200)
    assert sizes == request_sizes(1000, 50, 200)
    assert {s.prompt_tokens for s in sizes} <= set(range(800, 1001))
    assert {s.output_tokens for s in sizes} <= set(range(40, 51))
    assert len({s.prompt_tokens for s in sizes}) > 50  # drawn, not one size
    assert all(s.output_tokens >= 1 for s in request_sizes(1, 1, 5))


def test_more_requests_in_flight_give_more_tokens_a_gpu_and_fewer_a_user():
    _, inputs = inputs_for(SMALL)
    curve = simulate_curve(inputs, 16, 128, 32, budget=math.inf)
    assert [level.concurrency for level in curve.levels] == [1, 2, 4, 8, 16]
    assert [len(level.requests) for level in curve.levels] == [requests_at(c) for c in (1, 2, 4, 8, 16)]
    per_gpu = [level.output_tok_s_per_gpu for level in curve.levels]
    per_user = [level.tok_s_per_user for level in curve.levels]
    assert per_gpu == sorted(per_gpu) and per_gpu[-1] > 4 * per_gpu[0]
    assert per_user == sorted(per_user, reverse=True)
    assert curve.stopped_at is None and curve.stopped_because == ""


def test_throughput_is_per_gpu_each_of_two_gpus_counted():
    _, one = inputs_for(SMALL)
    _, two = inputs_for({**SMALL, "data_parallel": 2})
    alone = simulate_curve(one, 4, 128, 32, math.inf).levels[-1]
    paired = simulate_curve(two, 4, 128, 32, math.inf).levels[-1]
    total = sum(r.output_toks for r in paired.requests) / max(r.last_token_ts for r in paired.requests)
    assert paired.output_tok_s_per_gpu == pytest.approx(total / 2)
    # Two replicas share four requests: each GPU makes fewer tokens than one GPU running all four.
    assert paired.output_tok_s_per_gpu < alone.output_tok_s_per_gpu


def test_the_budget_stops_the_curve_keeps_the_levels_done_and_says_what_to_change():
    _, inputs = inputs_for(SMALL)
    whole = simulate_curve(inputs, 64, 128, 32, math.inf)
    budget = sum(level.work for level in whole.levels[:4]) + 1
    cut = simulate_curve(inputs, 64, 128, 32, budget, advice="do this instead")
    assert [level.concurrency for level in cut.levels] == [1, 2, 4, 8]
    assert cut.stopped_at == 16 and cut.work <= budget
    assert "stopped at C = 16" in cut.stopped_because and "do this instead" in cut.stopped_because
    assert f"{budget:,.0f} units" in cut.stopped_because
    # The levels kept are the same runs as the whole curve's.
    assert cut.levels[-1].output_tok_s_per_gpu == whole.levels[3].output_tok_s_per_gpu


def test_a_request_too_big_for_the_pool_stops_the_curve_with_the_engines_refusal():
    _, inputs = inputs_for(SMALL)
    curve = simulate_curve(inputs, 4, 2_000_000, 32, math.inf)
    assert curve.levels == () and curve.stopped_at == 1
    assert "could not run at C = 1" in curve.stopped_because and "KV pool" in curve.stopped_because


def test_each_level_sends_ten_rounds_of_c_requests_as_inferencex_and_the_validation_runs_do():
    _, inputs = inputs_for(SMALL)
    curve = simulate_curve(inputs, 8, 128, 32, budget=math.inf)
    assert [len(level.requests) for level in curve.levels] == [10, 20, 40, 80]
    assert requests_at(64) == REQUESTS_PER_CONCURRENCY * 64


def test_the_curve_runs_as_the_vllm_server_the_expected_errors_were_simulated_with():
    # The bands beside the curve's figures are the published vLLM runs' errors, simulated with
    # vLLM's server (its CUDA graphs and fitted cost a request): the curve runs the same server.
    _, inputs = inputs_for(SMALL)
    curve = simulate_curve(inputs, 2, 128, 32, math.inf)
    server = vllm_server(inputs.settings.max_num_seqs)
    sizes = request_sizes(128, 32, requests_at(2))
    alone = simulate(
        sizes,
        inputs.shape,
        inputs.hardware,
        inputs.settings,
        closed_loop=ClosedLoop(1, requests_at(1)),
        sample_interval=None,
        server=server,
    )
    assert curve.server == "vllm"
    assert curve.levels[0].ttft_mean_ms == pytest.approx(alone.summary["ttft_mean_ms"])
    # One request alone waits for the server's fixed cost a request, which no step holds.
    assert curve.levels[0].ttft_mean_ms > 1000 * server.request_fixed_s


def level_of(requests: list[RequestResult], gpus: int = 1) -> Level:
    return Level(4, tuple(requests), gpus, 0.0)


def test_goodput_counts_the_requests_meeting_both_targets_and_their_tokens_alone():
    # Four requests of 11 tokens over 1.1 s: 40 tok/s. Two meet TTFT ≤ 500 ms and TPOT ≤ 50 ms.
    level = level_of(
        [request(0, 0.1, 0.04), request(1, 0.4, 0.05), request(2, 0.6, 0.01), request(3, 0.1, 0.1)]
    )
    errors = figure_errors(False)
    targets = Targets.from_values(parse_planner_values({"slo_attainment_pct": 50}))
    assert (targets.ttft_ms, targets.tpot_ms) == (500, 50)  # the defaults
    shown = planned(level, targets, errors, price("dedicated-gpu-hour"))
    seconds = 0.1 + 0.1 * 10
    assert shown.meeting_share == 0.5
    assert shown.goodput_tok_s_per_gpu == pytest.approx(22 / seconds)
    assert shown.output_tok_s_per_gpu == pytest.approx(44 / seconds)
    assert shown.meets  # half meet, half are asked for
    # Within the expected error the share can only widen around the prediction.
    assert shown.meeting_share_low <= 0.5 <= shown.meeting_share_high
    # Dollars: $8 a GPU-hour over the tokens one GPU makes in an hour.
    assert shown.usd_per_m_tokens == pytest.approx(8 / (44 / seconds * 3600) * 1e6)


def test_a_request_at_its_targets_edge_leaves_the_share_within_the_expected_error():
    # Each request 5% under both targets: a TTFT band of more than 5% may push it over.
    level = level_of([request(n, 0.475, 0.0475) for n in range(4)])
    errors = figure_errors(False)
    assert errors["ttft_mean_ms"].share > 0.05
    shown = planned(level, Targets(500, 50, 0.9), errors, price("dedicated-gpu-hour"))
    assert (shown.meeting_share, shown.meeting_share_low, shown.meeting_share_high) == (1.0, 0.0, 1.0)


def test_every_figure_carries_the_validation_tables_expected_error_of_its_kind():
    for moe in (False, True):
        engine = engine_expected_errors(moe)
        errors = figure_errors(moe)
        assert errors["tok_s_per_user"].share == engine["tpot_mean_ms"].share  # 1 ÷ TPOT
        assert errors["output_tok_s_per_gpu"] == engine["output_tok_s"]
        assert errors["usd_per_m_output_tokens"].share == engine["output_tok_s"].share
        assert errors["ttft_mean_ms"] == engine["ttft_mean_ms"]


def stub_curve(levels: tuple[Level, ...] = (), lengths: tuple[int, int] = (300, 50)) -> Curve:
    return Curve(levels, tuple(level.concurrency for level in levels), 1.0, lengths=lengths)


def test_the_best_concurrency_is_the_most_tokens_a_gpu_among_those_meeting_the_targets():
    fast = Level(1, tuple(request(n, 0.05, 0.02) for n in range(4)), 1, 0.0)
    busy = Level(8, tuple(request(n, 0.2, 0.04) for n in range(16)), 1, 0.0)
    slow = Level(64, tuple(request(n, 3.0, 0.09) for n in range(128)), 1, 0.0)
    values, inputs = inputs_for(SMALL)
    found = plan(stub_curve((fast, busy, slow)), values, parse_planner_values({}), inputs)
    assert [level.meets for level in found.levels] == [True, True, False]
    assert found.best is not None and found.best.concurrency == 8
    assert "is 8:" in best_sentence(found) and found.errors["output_tok_s_per_gpu"].text in best_sentence(
        found
    )
    strict = plan(
        stub_curve((fast, busy, slow)), values, parse_planner_values({"tpot_target_ms": 10}), inputs
    )
    assert strict.best is None and "No concurrency simulated meets" in best_sentence(strict)


def test_published_runs_at_the_same_settings_stand_beside_the_curve_with_their_group():
    values, inputs = inputs_for(DEEPSEEK)
    found = plan(stub_curve(lengths=(1024, 1024)), values, parse_planner_values({}), inputs)
    at_settings = [
        run
        for run in runs()
        if (run.felab_model, run.felab_gpu, run.tp, run.dp, run.ep) == ("DeepSeek-V3", "h200", 8, 1, 1)
        and run.precision.startswith("fp8")
    ]
    expected = [run for run in at_settings if (run.input_len, run.output_len) == (1024, 1024)]
    assert len(expected) >= 3  # InferenceX's SGLang runs at C = 4, 16 and 64
    assert [point.run for point in found.measured] == sorted(expected, key=lambda run: run.concurrency)
    groups = {point.run.run_id: point.as_json()["group"] for point in found.measured}
    assert groups == {run.run_id: "fitted" if split()[run.run_id] == FIT else "predicted" for run in expected}
    others = Counter((run.input_len, run.output_len) for run in at_settings if run not in expected)
    assert found.other_lengths == tuple((i, o, n) for (i, o), n in sorted(others.items()))
    assert (1024, 8192) in others and (8192, 1024) in others
    # Another precision, parallelism or GPU is another run.
    assert runs_at({**values, "precision": "bf16"}) == []
    assert runs_at({**values, "tensor_parallel": 4}) == []
    assert runs_at({**values, "expert_parallel": True}) == []
    assert {run.felab_gpu for run in runs_at({**values, "hardware": "b200"})} == {"b200"}
    # A typed-in GPU or a pasted model is not the part that was measured.
    typed = plan(
        stub_curve(lengths=(1024, 1024)), values, parse_planner_values({}), inputs, hardware_typed_in=True
    )
    assert typed.measured == () and typed.other_lengths == ()


def test_felabs_error_beside_a_measured_run_is_its_level_at_the_same_concurrency():
    values, inputs = inputs_for(DEEPSEEK)
    at_16 = Level(16, tuple(request(n, 0.2, 0.015, 1024) for n in range(32)), 8, 0.0)
    found = plan(stub_curve((at_16,), lengths=(1024, 1024)), values, parse_planner_values({}), inputs)
    beside = {point.run.concurrency: point for point in found.measured}
    assert beside[4].errors() == {} and beside[64].errors() == {}
    errors = beside[16].errors()
    assert errors["tpot_mean_ms"] == pytest.approx(15 / beside[16].run.tpot_mean_ms - 1)
    assert errors["ttft_mean_ms"] == pytest.approx(200 / beside[16].run.ttft_mean_ms - 1)


def test_the_command_that_runs_a_curve_names_the_settings_that_differ_and_leaves_the_workload_out():
    values = parse_engine_values({**DEEPSEEK, "requests": 20, "expert_parallel": True})
    text = curve_command(values, {"curve_max_concurrency": 64})
    assert text.startswith("manage.py engine --curve --model DeepSeek-V3 --hardware h200")
    for flag in (
        "--tensor-parallel 8",
        "--expert-parallel",
        "--input-tokens 1024",
        "--curve-max-concurrency 64",
    ):
        assert flag in text
    assert "--requests" not in text and "--rate" not in text
    assert "--precision" not in text  # FP8 is the default


def test_a_band_is_where_the_measured_value_lies_when_felab_is_off_by_its_expected_error():
    for moe in (False, True):
        errors = figure_errors(moe)
        for key, source in (
            ("tok_s_per_user", "tpot_mean_ms"),
            ("usd_per_m_output_tokens", "output_tok_s_per_gpu"),
        ):
            share = errors[source].share
            # felab ÷ measured − 1 = e, |e| ≤ share: the measured source figure is felab's ÷ (1 + e)…
            low, high = errors[source].band(100.0)
            assert low == pytest.approx(100.0 / (1 + share))
            assert high == (pytest.approx(100.0 / (1 - share)) if share < 1 else math.inf)
            # …and a constant ÷ it, felab's × (1 + e).
            low, high = errors[key].band(100.0)
            assert low == pytest.approx(100.0 * max(0.0, 1 - share)) and high == pytest.approx(
                100.0 * (1 + share)
            )
            assert errors[key].text.startswith("−") and " / +" in errors[key].text


def test_the_share_within_expected_error_holds_every_request_to_where_its_measured_times_may_lie():
    errors = figure_errors(moe=True)
    ttft, tpot = errors["ttft_mean_ms"].share, errors["tpot_mean_ms"].share
    assert ttft < 1 and tpot < 1  # a finite top to test against
    level = level_of([request(0, 0.1, 0.02)])
    gpu_hour = price("dedicated-gpu-hour")

    def share_at_the_top(ttft_scale: float, tpot_scale: float) -> float:
        targets = Targets(100.0 * ttft_scale, 20.0 * tpot_scale, 0.9)
        return planned(level, targets, errors, gpu_hour).meeting_share_low

    # felab ÷ measured − 1 reaching −s puts the measured times at felab's ÷ (1 − s), past × (1 + s).
    between = ((1 + ttft + 1 / (1 - ttft)) / 2, (1 + tpot + 1 / (1 - tpot)) / 2)
    assert share_at_the_top(*between) == 0.0
    assert share_at_the_top(1.001 / (1 - ttft), 1.001 / (1 - tpot)) == 1.0


def test_a_share_under_the_target_never_reads_as_the_target():
    assert share_text(115 / 128) == "89.8%"  # not 90%
    assert share_text(0.8999) == "89.9%"
    assert share_text(1.0) == "100%" and share_text(0.9) == "90%" and share_text(0.0) == "0%"

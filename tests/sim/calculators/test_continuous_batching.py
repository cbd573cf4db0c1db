"""continuous-batching: lesson 03's sweep and the measured trace on felab's vLLM-style engine."""

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.serving.anchors import anchor_runs
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import SweepParams

CALC = get("continuous-batching")


def test_the_engine_keeps_rising_where_the_practice_server_stops_at_its_slots():
    out = CALC.run({}).outputs
    c1, c8, c32 = (out[f"agg_tok_s_c{c}"].value for c in (1, 8, 32))
    assert c1 < c8 < c32 and c32 > 2 * c8  # past the practice server's 8 slots, still rising
    practice = {
        level.conc: level.agg_tok_s for level in run_sweep(SweepParams.from_flat({"levels": "1,8,32"})).levels
    }
    assert out["practice_agg_tok_s_c32"].value == pytest.approx(practice[32])
    assert practice[32] < 1.2 * practice[8]  # its knee: 8 slots
    assert out["speedup_c32"].value == pytest.approx(c32 / c1)
    assert out["speedup_c32"].value > 3 * out["practice_speedup_c32"].value


def test_max_num_seqs_makes_the_engine_a_server_of_that_many_slots():
    capped = CALC.run({"max_num_seqs": 8}).outputs
    assert capped["agg_tok_s_c32"].value == pytest.approx(capped["agg_tok_s_c8"].value, rel=0.05)


def test_the_trace_is_the_4090_runs_and_its_outputs_are_the_engines():
    out = CALC.run({"trace": True}).outputs
    run = anchor_runs()[0]
    assert run.spec.folder == "RTX4090/Llama-3.1-8B"
    # The measured run: TTFT 65.5 s, about 49 running, KV at 100%; felab within the bench's targets.
    assert out["ttft_mean_s"].value == pytest.approx(run.summary["ttft_mean_ms"] / 1000, rel=0.20)
    assert out["tpot_mean_ms"].value == pytest.approx(run.summary["tpot_mean_ms"], rel=0.10)
    assert out["total_s"].value == pytest.approx(run.summary["total_s"], rel=0.10)
    assert abs(out["max_running"].value - max(run.timeseries["running"])) <= 2
    assert out["peak_kv_pct"].value == 100.0 and out["preemptions"].value > 0
    assert out["kv_tokens"].value == pytest.approx(run.kv_tokens, rel=0.03)


def test_without_the_trace_its_outputs_are_left_empty_and_say_why():
    out = CALC.run({}).outputs
    assert out["ttft_mean_s"].value is None
    assert out["ttft_mean_s"].formula.startswith("— : turn on trace")


def test_a_model_too_big_for_the_gpu_is_refused_naming_the_model():
    with pytest.raises(ParamError) as refused:
        CALC.run({"model": "Llama-3.1-70B", "hardware": "rtx-4090"})
    assert refused.value.param == "model"
    assert "Llama-3.1-70B on rtx-4090" in refused.value.message and "141.1 GB" in refused.value.message


def test_a_calibration_file_times_the_engines_steps():
    slow = '{"kind": "bandwidth", "op": "read", "gbs": 100.0}\n'
    own = CALC.run({"prompt_tokens": 64, "output_tokens": 16}).outputs["agg_tok_s_c1"].value
    measured = CALC.run({"prompt_tokens": 64, "output_tokens": 16, "calibration": slow}).outputs
    assert measured["agg_tok_s_c1"].value < own / 3
    with pytest.raises(ParamError) as refused:
        CALC.run({"calibration": "nope"})
    assert refused.value.param == "calibration"

"""The engine's declared settings, the run they build, the limit that binds, and the engine's
refusals naming the setting to change. Pure: no database, nothing timed by the clock."""

from __future__ import annotations

import json

import pytest

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.hardware.hardware import hardware_preset
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving.binding import binding_limit
from felab_sim.engine.serving.engine_params import (
    ENGINE_PARAMS,
    engine_inputs,
    parse_engine_values,
    rate_trace,
    run_engine,
    sweep_engine,
)
from felab_sim.engine.serving.kv_pool import BlockPool
from felab_sim.engine.serving.run_results import Counters
from felab_sim.engine.serving.scheduler import Replica, Request
from felab_sim.engine.serving.simulate import (
    SAMPLE_WORK_UNITS,
    EngineSettings,
    TraceRequest,
    WorkBudgetExceeded,
    simulate,
)
from felab_sim.engine.sweep.limits import ENGINE_WEB_LIMITS
from tests.support.engine_runs import ON_A_4090

from .test_batching_engine import ONE_BYTE_BLOCKS


def run(**given):
    inputs = engine_inputs(parse_engine_values({**ON_A_4090, **given}))
    result = run_engine(inputs)
    return inputs, result, binding_limit(result, inputs.settings)


def refused(given: dict, config: str | None = None) -> ParamError:
    with pytest.raises(ParamError) as caught:
        inputs = engine_inputs(parse_engine_values({**ON_A_4090, **given}), config)
        run_engine(inputs)
    return caught.value


# --- the binding limit, from the run's own counters -----------------------------------------------


def test_few_slots_bind_as_slots():
    _, result, binding = run(max_num_seqs=8, requests=40)
    assert binding.limit == "seqs"
    assert "max_num_seqs = 8" in binding.sentence
    assert result.max_running == 8


def test_the_default_run_on_a_4090_runs_out_of_kv_blocks():
    # 100 requests of 512 + 256 tokens at 10 a second hold more context than the 41,008-token pool.
    _, result, binding = run()
    assert binding.limit == "blocks"
    assert result.counters.peak_kv_pct == pytest.approx(100, abs=1)
    assert "41,008-token KV pool" in binding.sentence


def test_a_small_token_budget_binds_as_the_budget():
    _, _, binding = run(max_num_batched_tokens=64, requests=40)
    assert binding.limit == "budget"
    assert "max_num_batched_tokens = 64" in binding.sentence


def test_a_light_load_is_bound_by_bandwidth():
    _, result, binding = run(requests=10, rate=0.5, output_tokens=64)
    assert result.counters.waiting_by == {}
    assert binding.limit == "bandwidth"


def test_long_prompts_on_slow_arithmetic_are_bound_by_compute():
    _, _, binding = run(
        hardware="custom", memory_gb=48, bandwidth_gbs=2000, peak_tflops=10,
        input_tokens=1024, output_tokens=1, rate=0.5, requests=5,
    )  # fmt: skip
    assert binding.limit == "compute"


def test_the_scheduler_says_why_the_queue_stopped():
    engine = Replica(BlockPool(100, ONE_BYTE_BLOCKS, False), max_num_seqs=1, max_num_batched_tokens=8)
    engine.waiting.extend([Request(0, 0.0, 4, 2), Request(1, 0.0, 4, 2)])
    engine.schedule()
    assert engine.stopped_by == "seqs"
    tight = Replica(BlockPool(1, ONE_BYTE_BLOCKS, False), max_num_seqs=8, max_num_batched_tokens=64)
    tight.waiting.extend([Request(0, 0.0, 4, 1), Request(1, 0.0, 4, 1)])
    tight.schedule()
    assert tight.stopped_by == "blocks"
    spent = Replica(BlockPool(100, ONE_BYTE_BLOCKS, False), max_num_seqs=8, max_num_batched_tokens=4)
    spent.waiting.extend([Request(0, 0.0, 4, 1), Request(1, 0.0, 4, 1)])
    spent.schedule()
    assert spent.stopped_by == "budget"


# --- the workload ------------------------------------------------------------------------------------


def test_a_rate_workload_is_the_same_every_time_and_about_its_rate():
    first, again = rate_trace(100, 10.0, 512, 256), rate_trace(100, 10.0, 512, 256)
    assert first == again and first[0].arrival == 0
    assert first[-1].arrival == pytest.approx(99 / 10, rel=0.25)


def test_a_concurrency_workload_keeps_that_many_in_flight():
    inputs, result, _ = run(workload="concurrency", concurrency=4, requests=12, output_tokens=32)
    assert inputs.closed_loop is not None and len(result.requests) == 12
    assert result.max_running == 4


def test_typed_figures_replace_the_presets():
    inputs = engine_inputs(
        parse_engine_values({"hardware": "h100-sxm", "memory_gb": 40, "bandwidth_gbs": 1000})
    )
    assert inputs.hardware.memory_bytes == 40 * 10**9
    assert inputs.hardware.memory_bandwidth == 1000 * 10**9
    assert inputs.hardware.name == "h100-sxm"  # keeps the preset's fitted efficiencies


def test_a_pasted_config_runs_as_its_preset_does():
    config = json.dumps(dict(preset("Llama-3.1-8B").config))
    given = {**ON_A_4090, "requests": 10, "output_tokens": 16}
    pasted = run_engine(engine_inputs(parse_engine_values({**given, "model": "config"}), config))
    named = run_engine(engine_inputs(parse_engine_values(given)))
    assert pasted.summary == named.summary


def test_the_sweep_has_lesson_03s_levels_and_metric_names():
    levels = sweep_engine(engine_inputs(parse_engine_values({"output_tokens": 8})))
    assert [level["conc"] for level in levels] == [1, 2, 4, 8, 16, 32]
    assert set(levels[0]) == {"conc", "requests", "agg_tok_s", "user_tok_s", "ttft_p50_ms", "ttft_p95_ms"}
    assert levels[-1]["agg_tok_s"] > levels[0]["agg_tok_s"]


# --- refusals name the setting ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "param"),
    [
        ({"max_num_seqs": 0}, "max_num_seqs"),
        ({"expert_parallel": True}, "expert_parallel"),
        ({"hardware": "dgx-spark"}, "peak_tflops"),
        ({"hardware": "custom", "bandwidth_gbs": 100, "peak_tflops": 10}, "memory_gb"),
        ({"tensor_parallel": 3}, "tensor_parallel"),
        ({"gpu_memory_utilization": 0.1}, "gpu_memory_utilization"),
        ({"input_tokens": 100_000}, "trace"),
        ({"model": "config"}, "model_config"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(given, param):
    error = refused(given)
    assert error.param == param
    assert param in error.message or param == "trace"


def test_a_config_beside_a_preset_and_a_broken_config_name_model_config():
    assert refused({}, '{"model_type": "llama"}').param == "model_config"
    assert "cannot be read" in refused({"model": "config"}, "{not json").message


def test_the_engine_names_the_setting_itself():
    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    trace = [TraceRequest(0.0, 8, 8)]
    with pytest.raises(ParamError) as caught:
        simulate(trace, shape, hardware, EngineSettings(gpu_memory_utilization=0.5))
    assert caught.value.param == "gpu_memory_utilization"
    with pytest.raises(ParamError) as caught:
        simulate(trace, shape, hardware_preset("dgx-spark"))
    assert caught.value.param == "hardware"


def test_a_run_over_its_work_budget_stops_naming_requests():
    inputs = engine_inputs(parse_engine_values({"requests": 20, "output_tokens": 64}))
    result = run_engine(inputs)
    # The steps' work and the timeseries' samples are counted against the budget.
    spent = result.work + SAMPLE_WORK_UNITS * len(result.timeseries)
    with pytest.raises(WorkBudgetExceeded) as caught:
        run_engine(inputs, work_budget=spent / 2)
    assert caught.value.param == "requests"
    assert run_engine(inputs, work_budget=spent).work == result.work


def test_the_web_caps_requests_and_pasted_configs():
    with pytest.raises(ParamError, match="at most 100"):
        ENGINE_WEB_LIMITS.check(parse_engine_values({"requests": 101}))
    ENGINE_WEB_LIMITS.check(parse_engine_values({"requests": 100}))
    with pytest.raises(ParamError) as caught:
        ENGINE_WEB_LIMITS.check_config("x" * 20_001)
    assert caught.value.param == "model_config"


def test_the_timeseries_is_sampled_at_the_interval_asked():
    inputs = engine_inputs(parse_engine_values({"requests": 20}))
    every_second = run_engine(inputs).timeseries
    tenths = run_engine(inputs, sample_interval=0.1).timeseries
    assert len(tenths) >= 9 * len(every_second)
    assert tenths[9].t == pytest.approx(1.0)


def test_every_setting_is_declared_once():
    names = [param.name for param in ENGINE_PARAMS]
    assert len(names) == len(set(names))


def test_a_queue_that_forms_briefly_is_named_after_the_steps_limit():
    # Issue 24's Qwen run: slots bind briefly (37 waiting at peak), the rest of the time the steps.
    inputs, result, _ = run(requests=10, rate=0.5, output_tokens=64)
    result.counters = Counters(steps=100, waiting_by={"seqs": 10, "budget": 2}, unqueued_steps=90)
    binding = binding_limit(result, inputs.settings)
    assert binding.limit == "bandwidth"
    assert binding.sentence.endswith("Requests waited briefly (10% of the steps), for slots (max_num_seqs).")
    result.counters = Counters(steps=100, waiting_by={"seqs": 25}, unqueued_steps=75)
    assert binding_limit(result, inputs.settings).limit == "seqs"

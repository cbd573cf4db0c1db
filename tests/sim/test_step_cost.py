"""One step-cost function times every step felab prices: change its fixed cost and the engine,
step-time, decode-ceiling, roofline, prefill (from physics), the chain and continuous batching all
move (felab_sim/engine/hardware/step_cost.py)."""

from __future__ import annotations

import pytest

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.calculators import continuous_batching as cb
from felab_sim.engine.course import chain
from felab_sim.engine.hardware import step_cost
from felab_sim.engine.hardware.hardware import hardware_preset
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving.simulate import EngineSettings, TraceRequest, simulate

EXTRA_S = 0.005


def _engine_tpot() -> float:
    trace = [TraceRequest(0.0, 200, 20) for _ in range(4)]
    result = simulate(trace, preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090"), EngineSettings())
    return result.summary["tpot_mean_ms"]


def _calc(name: str, output: str, **params: str) -> float:
    return float(CALCULATORS[name].run(params).value(output))  # type: ignore[arg-type]


def _continuous_batching() -> float:
    cb._sweep.cache_clear()
    return 1 / _calc("continuous-batching", "agg_tok_s_c1", prompt_tokens="64", output_tokens="16")


TIMES = {
    "engine": _engine_tpot,
    "step-time": lambda: _calc("step-time", "step_ms"),
    "decode-ceiling": lambda: _calc("decode-ceiling", "ms_per_token"),
    "roofline": lambda: _calc("roofline", "step_ms"),
    "prefill": lambda: _calc("prefill", "prefill_ms", model="Llama-3.1-8B"),
    "chain ttft": lambda: float(chain.walk({}).step("ttft").value),  # type: ignore[arg-type]
    "chain decode": lambda: 1 / float(chain.walk({}).step("decode").value),  # type: ignore[arg-type]
    "continuous-batching": _continuous_batching,
}


def test_every_step_moves_with_the_one_functions_fixed_cost(monkeypatch):
    before = {name: time() for name, time in TIMES.items()}
    fixed = step_cost.fixed_cost_s
    monkeypatch.setattr(
        step_cost, "fixed_cost_s", lambda cost, calibration: fixed(cost, calibration) + EXTRA_S
    )
    after = {name: time() for name, time in TIMES.items()}
    cb._sweep.cache_clear()
    moved = {name for name in TIMES if after[name] > before[name] * (1 + 1e-6)}
    assert moved == set(TIMES)
    assert after["step-time"] - before["step-time"] == pytest.approx(1000 * EXTRA_S)
    assert after["roofline"] - before["roofline"] == pytest.approx(1000 * EXTRA_S)

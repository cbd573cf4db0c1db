"""Continuous batching: lesson 03's sweep and the measured runs' trace on a vLLM-style engine
(lesson 14).

Every number here is a run of felab's continuous-batching engine (felab_sim/engine/serving/:
vLLM V1's scheduler, the paged KV pool, step times fitted on real vLLM runs), so a card can cite
it live: lesson 03's closed-loop sweep at C = 1, 8 and 32 beside the practice server's fixed
slots, and, with ``trace`` on, the 300-request ShareGPT trace of LLMServingSim's measured runs
(felab_sim/engine/serving/anchors.py), whose means bench/bench_engine.py checks against vLLM's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, typed
from ..core.chart import BLUE, GREY, Figure, Series, layout, line, measured_runs
from ..core.params import Param, ParamError
from ..hardware.hardware import HARDWARE, hardware_preset
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from ..serving.anchors import SETTING_NAMES, anchor_runs, bundled_trace, matching_anchor
from ..serving.engine_params import SWEEP_LEVELS, sweep_requests
from ..serving.run_results import Result
from ..serving.simulate import EngineSettings, TraceRequest, WorkBudgetExceeded, concurrency_sweep, simulate
from ..serving.step_time import calibration_for
from ..sweep.limits import ENGINE_WEB_LIMITS
from ..sweep.simulator import run_sweep
from ..sweep.sweep_params import SweepParams
from .step_time import CALIBRATION

MODEL = Param(
    "model",
    "choice",
    "Llama-3.1-8B",
    "A model preset (its published config.json), BF16 weights.",
    choices={name: name for name in MODEL_PRESETS},
)
GPU = Param(
    "hardware",
    "choice",
    "rtx-4090",
    "One GPU, from its vendor's spec sheet (those with a published dense BF16 peak).",
    choices={h.name: h.vendor_name for h in HARDWARE if h.bf16_flops is not None},
)
MAX_NUM_SEQS = Param(
    "max_num_seqs", "int", 256, "Most requests the engine runs at once (vLLM's setting).", low=1, high=1024
)
PROMPT_TOKENS = Param(
    "prompt_tokens", "int", 512, "Prompt tokens of each request of the sweep.", "tokens", low=1, high=32_768
)
OUTPUT_TOKENS = Param(
    "output_tokens",
    "int",
    128,
    "Output tokens of each request of the sweep (lesson 03's max_tokens).",
    "tokens",
    low=1,
    high=2048,
)
TRACE = Param(
    "trace",
    "bool",
    False,
    "Also run the measured runs' 300-request ShareGPT trace (about 10 requests a second).",
)
LEVELS = (1, 8, 32)  # the outputs' levels; the chart draws every one of SWEEP_LEVELS
TRACE_KEYS = ("ttft_mean_s", "tpot_mean_ms", "total_s", "max_running", "peak_kv_pct", "preemptions")
# The engine settings this calculator leaves at vLLM's defaults (all but max_num_seqs).
_DEFAULT_SETTINGS = {name: getattr(EngineSettings(), name) for name in SETTING_NAMES}
# Lesson 03's sweep on the practice server, as the course runs it: 8 slots, 18 ms a step.
PRACTICE = SweepParams.from_flat({"levels": ",".join(str(level) for level in SWEEP_LEVELS)})


def _engine(p: Params) -> tuple:
    return (
        MODEL_PRESETS[p["model"]].shape,
        hardware_preset(p["hardware"]),
        EngineSettings(max_num_seqs=p["max_num_seqs"]),
    )


def _refusal(error: ParamError, p: Params) -> ParamError:
    """The engine's refusal, named after this calculator's setting to change."""
    if error.param in {"trace", "input_tokens", "requests"}:
        return ParamError("prompt_tokens", f"prompt_tokens: {error.message}")
    if error.param in {param.name for param in CALCULATOR.params}:
        return error
    return ParamError("model", f"model: {p['model']} on {p['hardware']}: {error.message}")


@lru_cache(maxsize=128)
def _sweep(
    model: str, hardware: str, seqs: int, prompt: int, output: int, calibration: str | None = None
) -> tuple[dict[str, float], ...]:
    """Lesson 03's sweep on the engine, held to the web's cap on one engine run (max_num_seqs 8,
    a parameter set cards cite, costs about 40,000 units; the engine page's own sweep, beside
    its run, has a smaller cap)."""
    p = {"model": model, "hardware": hardware, "max_num_seqs": seqs}
    shape, gpu, settings = _engine(p)
    cap = ENGINE_WEB_LIMITS.run_work
    try:
        found = concurrency_sweep(
            SWEEP_LEVELS,
            [TraceRequest(0.0, prompt, output)],
            shape,
            gpu,
            settings,
            requests_per_level=sweep_requests,
            work_budget=cap,
            calibration=calibration_for(gpu, calibration) if calibration else None,
        )
    except WorkBudgetExceeded:
        # An output token costs about 2 units over the levels (a request's unit in its step, and a
        # share of the step's own 4), a prompt 1.5 units a 16-token block: name the larger.
        name = "output_tokens" if 2 * output >= prompt * 1.5 / 16 else "prompt_tokens"
        raise ParamError(
            name,
            f"{name}: the sweep at C = {', '.join(str(c) for c in SWEEP_LEVELS)} with {prompt:,}-token "
            f"prompts and {output:,}-token outputs needs more than {cap:,.0f} units of simulation work, "
            "the web's cap; use fewer prompt or output tokens, or run `manage.py engine`",
        ) from None
    except ParamError as error:
        raise _refusal(error, p) from None
    return tuple(found)


@lru_cache(maxsize=16)
def _trace_run(model: str, hardware: str, seqs: int, calibration: str | None = None) -> Result:
    """The trace through the engine: a measured run's settings read felab's stored run of it
    (anchor_runs.json, equal to the engine's by tests/sim/test_anchor_felab.py); any other
    settings are simulated within the web's work cap, as /sim/engine/'s runs are."""
    p = {"model": model, "hardware": hardware, "max_num_seqs": seqs}
    shape, gpu, settings = _engine(p)
    anchor = None if calibration else matching_anchor(model, hardware, False, settings, on_trace=True)
    stored = None if anchor is None else anchor.felab_result_for(settings)
    if stored is not None:
        return stored
    cap = ENGINE_WEB_LIMITS.run_work
    try:
        return simulate(
            list(bundled_trace(model, hardware)),
            shape,
            gpu,
            settings,
            calibration_for(gpu, calibration) if calibration else None,
            work_budget=cap,
        )
    except WorkBudgetExceeded:
        raise ParamError(
            "trace",
            f"trace: the 300 requests need more than {cap:,.0f} units of simulation work with "
            f"these settings, the web's cap; the measured runs' own settings ({_anchor_names()}) "
            "are stored and shown at once, or run `manage.py engine --trace` for any other",
        ) from None
    except ParamError as error:
        raise _refusal(error, p) from None


def _anchor_names() -> str:
    found = []
    for run in anchor_runs():
        if set(run.setting_values().items()) <= set(_DEFAULT_SETTINGS.items()) | {
            ("max_num_seqs", run.settings.max_num_seqs)
        }:
            found.append(f"{run.spec.model} on {run.spec.hardware}, max_num_seqs {run.settings.max_num_seqs}")
    return "; ".join(found)


@lru_cache(maxsize=1)
def _practice() -> dict[int, float]:
    return {level.conc: level.agg_tok_s for level in run_sweep(PRACTICE).levels}


def _levels(p: Params) -> dict[int, dict[str, float]]:
    found = _sweep(
        p["model"], p["hardware"], p["max_num_seqs"], p["prompt_tokens"], p["output_tokens"], p["calibration"]
    )
    return {level["conc"]: level for level in found}


def _check(p: Params) -> None:
    if p["calibration"]:
        calibration_for(hardware_preset(p["hardware"]), p["calibration"])  # a bad file, named


def _compute(p: Params) -> dict[str, float | int | None]:
    levels = _levels(p)
    practice = _practice()
    out: dict[str, float | int | None] = {f"agg_tok_s_c{c}": levels[c]["agg_tok_s"] for c in LEVELS}
    out["speedup_c32"] = levels[32]["agg_tok_s"] / levels[1]["agg_tok_s"]
    out["practice_agg_tok_s_c32"] = practice[32]
    out["practice_speedup_c32"] = practice[32] / practice[1]
    out |= dict.fromkeys(TRACE_KEYS)
    if p["trace"]:
        run = _trace_run(p["model"], p["hardware"], p["max_num_seqs"], p["calibration"])
        out |= {
            "ttft_mean_s": run.summary["ttft_mean_ms"] / 1000,
            "tpot_mean_ms": run.summary["tpot_mean_ms"],
            "total_s": run.summary["total_s"],
            "max_running": run.max_running,
            "peak_kv_pct": run.counters.peak_kv_pct,
            "preemptions": run.preemptions,
        }
        out["kv_tokens"] = run.pool.kv_tokens
    else:
        out["kv_tokens"] = _pool_tokens(p["model"], p["hardware"], p["max_num_seqs"])
    return out


@lru_cache(maxsize=128)
def _pool_tokens(model: str, hardware: str, seqs: int) -> int:
    """The KV pool of one GPU as the engine sizes it at start-up (one one-token request run)."""
    p = {"model": model, "hardware": hardware, "max_num_seqs": seqs}
    shape, gpu, settings = _engine(p)
    try:
        return simulate([TraceRequest(0.0, 1, 1)], shape, gpu, settings).pool.kv_tokens
    except ParamError as error:
        raise _refusal(error, p) from None


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    where = f"{p['model']} on {p['hardware']}, max_num_seqs {typed(p['max_num_seqs'])}"
    size = f"{counted(p['prompt_tokens'], 'prompt token')} + {typed(p['output_tokens'])} out"
    found = {
        f"agg_tok_s_c{c}": (
            f"{out(f'agg_tok_s_c{c}')} = output tokens ÷ wall time of {counted(sweep_requests(c), 'request')} "
            f"({size}) at C = {c}, simulated: {where}"
        )
        for c in LEVELS
    }
    found["speedup_c32"] = f"{out('speedup_c32')} = {out('agg_tok_s_c32')} ÷ {out('agg_tok_s_c1')}"
    found["practice_agg_tok_s_c32"] = (
        f"{out('practice_agg_tok_s_c32')} = lesson 03's practice server at C = 32, simulated "
        f"({PRACTICE.server.slots} slots, {typed(PRACTICE.server.step_ms, 'ms')} a step)"
    )
    found["practice_speedup_c32"] = (
        f"{out('practice_speedup_c32')} = the practice server's C = 32 throughput ÷ its C = 1"
    )
    found["kv_tokens"] = (
        f"{out('kv_tokens')} = (memory × 0.9 − weights − reserve) ÷ one block's bytes × 16 tokens: {where}"
    )
    for key in TRACE_KEYS:
        found[key] = (
            f"{out(key)} = the measured runs' 300 ShareGPT requests through the engine: {where}"
            if p["trace"]
            else "— : turn on trace to run the measured runs' 300 requests"
        )
    return found


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    levels = _levels(p)
    practice = _practice()
    data = [
        line(
            "this engine (continuous batching)",
            list(levels),
            [levels[c]["agg_tok_s"] for c in levels],
            BLUE,
            mode="lines+markers",
        ),
        line(
            f"lesson 03's practice server ({PRACTICE.server.slots} slots)",
            list(practice),
            list(practice.values()),
            GREY,
            mode="lines+markers",
            line={"color": GREY, "width": 2, "dash": "dash"},
        ),
    ]
    data += measured_runs(measured)
    figure_layout = layout(
        "concurrency C (requests in flight)",
        "output throughput (tok/s)",
        xaxis={
            "title": {"text": "concurrency C (requests in flight)"},
            "type": "log",
            "tickvals": list(SWEEP_LEVELS),
            "ticktext": [str(c) for c in SWEEP_LEVELS],
        },
        yaxis={"title": {"text": "output throughput (tok/s)"}, "type": "log"},
    )
    return {"data": data, "layout": figure_layout}


CALCULATOR = Calculator(
    name="continuous-batching",
    order=110,
    title="Continuous batching against fixed slots",
    lessons=("03", "14"),
    meaning=(
        "A vLLM-style engine lets requests join and leave the batch every step, so one read of the "
        "weights serves every running request and throughput keeps rising with concurrency until "
        "its KV blocks or max_num_seqs run out; a server of fixed slots stops rising at its slots."
    ),
    params=(MODEL, GPU, MAX_NUM_SEQS, PROMPT_TOKENS, OUTPUT_TOKENS, TRACE, CALIBRATION),
    check=_check,
    outputs=(
        OutputSpec("agg_tok_s_c1", "tok/s", "output throughput at C = 1"),
        OutputSpec("agg_tok_s_c8", "tok/s", "output throughput at C = 8"),
        OutputSpec("agg_tok_s_c32", "tok/s", "output throughput at C = 32"),
        OutputSpec("speedup_c32", "×", "C = 32 over C = 1"),
        OutputSpec("practice_agg_tok_s_c32", "tok/s", "lesson 03's practice server at C = 32"),
        OutputSpec("practice_speedup_c32", "×", "the practice server's C = 32 over C = 1"),
        OutputSpec("kv_tokens", "tokens", "KV pool, one GPU"),
        OutputSpec("ttft_mean_s", "s", "trace: mean time to first token"),
        OutputSpec("tpot_mean_ms", "ms", "trace: mean time per output token"),
        OutputSpec("total_s", "s", "trace: total time"),
        OutputSpec("max_running", "requests", "trace: most requests running at once"),
        OutputSpec("peak_kv_pct", "%", "trace: peak share of KV blocks in use"),
        OutputSpec("preemptions", "", "trace: preemptions (recomputed)"),
    ),
    compute=_compute,
    formulas=_formulas,
    simulates=True,
    chart=_chart,
    chart_description=(
        "Output throughput against concurrency: this engine at these settings beside lesson 03's "
        "practice server, both simulated."
    ),
    examples=(
        WorkedExample(
            "issue 24: the RTX 4090 run's 300 requests fill its 41,008-token pool (felab; vLLM's: 41,408)",
            {"trace": "on"},
            "kv_tokens",
            "41,008 tokens",
        ),
        WorkedExample(
            "max_num_seqs 8 caps the engine like 8 slots: C = 32 no faster than C = 8",
            {"max_num_seqs": "8"},
            "agg_tok_s_c32",
            "367.4 tok/s",
        ),
    ),
    note=(
        "The engine's step times come from felab's one step cost: an H200's measured bandwidth, FLOP/s "
        "and kernel cost (other GPUs take its ratios to their specs), and two numbers fitted on "
        'LLMServingSim\'s vLLM runs (docs/benchmarks.md, "Predicted from measurements"). '
        "With trace on, the measured runs' settings read felab's stored run of their trace (equal to the "
        "engine's, by a test); other settings are simulated within the web's work cap."
    ),
)

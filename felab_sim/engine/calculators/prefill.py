"""Prefill: the time to first token from the prompt's length (lessons 01 and 06's formula).

Two ways to price the prompt: at a typed rate (the practice server's, a straight line: the
default), or from physics, a model on a GPU: one step of the uncached tokens through the model
(linear layers, and attention over P (P + 1) / 2 pairs, causal, plus the cached tokens before
them), on the roofline at the GPU's calibration: felab_sim/engine/hardware/step_cost.py's one function."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, require, typed
from ..core.chart import (
    BLUE,
    GREEN,
    ORANGE,
    Figure,
    Measured,
    Series,
    evenly,
    layout,
    line,
    measured_runs,
    points,
    these_settings,
)
from ..core.params import Param
from ..hardware.calibration import engine_calibration
from ..hardware.step_cost import StepCost
from ..hardware.step_load import StepLoad
from ..models.model_params import check_tensor_parallel, shape_of
from .step_time import CALIBRATION, HARDWARE_PARAM, PRECISION, TENSOR_PARALLEL, priced
from .step_time import MODEL as STEP_MODEL

RATE = "rate"  # the model choice that prices a prompt at the typed rate
MODEL = replace(
    STEP_MODEL,
    default=RATE,
    help="The typed rate below (the practice server's), or a published model on the GPU below: "
    "its prompt priced from physics.",
    choices={RATE: "the typed prefill speed", **STEP_MODEL.choices},
)

PROMPT_TOKENS = Param(
    "prompt_tokens",
    "int",
    8000,
    "Tokens in the prompt (about 4 characters each).",
    "tokens",
    low=1,
    high=10_000_000,
)
CACHED_TOKENS = Param(
    "cached_tokens",
    "int",
    0,
    "Tokens of the prompt already in the prefix cache: they cost no prefill.",
    "tokens",
    low=0,
    high=10_000_000,
)
OVERHEAD_MS = Param(
    "overhead_ms",
    "float",
    15.0,
    "Fixed cost of every request before prefill starts.",
    "ms",
    label="overhead per request",
    low=0,
    high=100_000,
)
PREFILL_TOK_S = Param(
    "prefill_tok_s",
    "float",
    2500.0,
    "How fast the server reads prompt tokens (the practice server's rate).",
    "tok/s",
    label="prefill speed",
    low=1,
    high=10_000_000,
)


def _check(p: Params) -> None:
    if physics(p):
        check_tensor_parallel(
            shape_of({"model": p["model"], "model_config": None}), int(p["tensor_parallel"])
        )
        engine_calibration(_hardware(p), p["calibration"])  # a file that cannot be read, named
    require(
        p["cached_tokens"] <= p["prompt_tokens"],
        "cached_tokens",
        f"cached_tokens must be at most prompt_tokens ({p['prompt_tokens']:,})",
    )


def prefill_ms(uncached_tokens: int, prefill_tok_s: float) -> float:
    return uncached_tokens / prefill_tok_s * 1000.0


def physics(p: Params) -> bool:
    return p["model"] != RATE


def prompt_step(p: Params) -> StepCost:
    """The uncached tokens' one step: each attends to the cached tokens and to those before it."""
    cached, uncached = int(p["cached_tokens"]), int(p["prompt_tokens"] - p["cached_tokens"])
    pairs = uncached * (cached + (uncached + 1) / 2)
    load = StepLoad(uncached, 1, cached + uncached, cached + uncached, pairs, pairs)
    settings = {**p, "batch": 0, "context_tokens": 0, "prompt_tokens": 0, "model_config": None}
    calibration = engine_calibration(_hardware(p), p["calibration"])
    return priced(settings, calibration, load)[0]


def _hardware(p: Params):
    from .step_time import step_hardware

    return step_hardware(p)


def _compute(p: Params) -> dict[str, float]:
    uncached = p["prompt_tokens"] - p["cached_tokens"]
    if physics(p):
        prefill = 1000 * prompt_step(p).seconds if uncached else 0.0
    else:
        prefill = prefill_ms(uncached, p["prefill_tok_s"])
    return {
        "ttft_ms": p["overhead_ms"] + prefill,
        "uncached_tokens": uncached,
        "prefill_ms": prefill,
    }


# Lesson 01 (Ollama, llama3.1:8b on the course's Mac): TTFT p50 by prompt length.
LESSON_01 = "Ollama, llama3.1:8b, on the course's Mac (lesson 01)"
LESSON_01_RUNS = ((12, 145.0), (8000, 4210.0))


def _measured(p: Params) -> list[Measured]:
    if p["overhead_ms"] != 15 or p["prefill_tok_s"] != 2500 or physics(p):
        return []
    return [
        Measured(
            f"TTFT p50, {tokens:,}-token prompt",
            ms,
            "ms",
            LESSON_01,
            CALCULATOR.run_with(p, prompt_tokens=tokens, cached_tokens=0).value("ttft_ms"),
            x=tokens,
        )
        for tokens, ms in LESSON_01_RUNS
    ]


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    xs = evenly(max(16_000, p["prompt_tokens"] * 1.5))
    if physics(p):
        cold = [
            CALCULATOR.compute_with("ttft_ms", p, prompt_tokens=max(1, int(x)), cached_tokens=0) for x in xs
        ]
        warm = [
            CALCULATOR.compute_with(
                "ttft_ms",
                p,
                prompt_tokens=max(1, int(x)),
                cached_tokens=min(p["cached_tokens"], max(1, int(x))),
            )
            for x in xs
        ]
    else:
        cold = [p["overhead_ms"] + x / p["prefill_tok_s"] * 1000 for x in xs]
        warm = [p["overhead_ms"] + max(0.0, x - p["cached_tokens"]) / p["prefill_tok_s"] * 1000 for x in xs]
    data = [line("nothing cached", xs, cold, BLUE)]
    if p["cached_tokens"]:
        data.append(line(f"first {p['cached_tokens']:,} tokens cached", xs, warm, GREEN))
    data.append(these_settings(p["prompt_tokens"], CALCULATOR.run(p).value("ttft_ms")))
    if rows := _measured(p):
        data.append(points(f"measured: {LESSON_01}", [r.x for r in rows], [r.measured for r in rows], ORANGE))
    data += measured_runs(measured)
    return {"data": data, "layout": layout("prompt tokens", "time to first token (ms)")}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    rate = typed(p["prefill_tok_s"], "tok/s")
    if physics(p):
        uncached = p["prompt_tokens"] - p["cached_tokens"]
        step = prompt_step(p)
        ms = lambda seconds: typed(round(seconds * 1000, 3), "ms")  # noqa: E731
        prefill = (
            f"{out('prefill_ms')} = one step of {counted(uncached, 'token')} through {p['model']} on "
            f"{_hardware(p).vendor_name}: max({ms(step.weights_s)} weights, {ms(step.linear_compute_s)} linear "
            f"compute) + max({ms(step.kv_s)} KV, {ms(step.attention_compute_s)} attention over "
            f"{typed(uncached)} × ({typed(p['cached_tokens'])} cached + ({typed(uncached)} + 1) ÷ 2) pairs) + "
            f"{ms(step.link_s)} link + {ms(step.fixed_s)} fixed"
            if uncached
            else f"{out('prefill_ms')}: every token cached"
        )
    else:
        prefill = f"{out('prefill_ms')} = 1,000 × {out('uncached_tokens')} ÷ {rate}"
    return {
        "ttft_ms": f"{out('ttft_ms')} = {typed(p['overhead_ms'], 'ms')} overhead + {out('prefill_ms')}",
        "uncached_tokens": (
            f"{out('uncached_tokens')} = {counted(p['prompt_tokens'], 'token')} − {typed(p['cached_tokens'])} cached"
        ),
        "prefill_ms": prefill,
    }


CALCULATOR = Calculator(
    name="prefill",
    order=10,
    title="Prefill and time to first token",
    lessons=("01", "06"),
    meaning=(
        "Before the first word appears the server reads the whole prompt, so the wait grows in a "
        "straight line with every token it has not cached."
    ),
    params=(
        PROMPT_TOKENS,
        CACHED_TOKENS,
        OVERHEAD_MS,
        PREFILL_TOK_S,
        MODEL,
        HARDWARE_PARAM,
        PRECISION,
        TENSOR_PARALLEL,
        CALIBRATION,
    ),
    outputs=(
        OutputSpec("ttft_ms", "ms", "time to first token"),
        OutputSpec("uncached_tokens", "tokens", "tokens prefilled"),
        OutputSpec("prefill_ms", "ms", "of which reading the prompt"),
    ),
    compute=_compute,
    formulas=_formulas,
    check=_check,
    chart=_chart,
    chart_description=(
        "Time to first token against prompt length, with nothing cached and with the cached part skipped."
    ),
    measured=_measured,
    examples=(
        WorkedExample("lesson 01: 8,000 tokens → 3,215 ms", {"prompt_tokens": "8000"}, "ttft_ms", "3,215 ms"),
        WorkedExample("lesson 01: 4,000 tokens → 1,615 ms", {"prompt_tokens": "4000"}, "ttft_ms", "1,615 ms"),
    ),
)

"""Prefix cache: what a repeated prompt costs, shared part first or variable part first.

Lesson 06's formulas (and lesson 03's token count). The practice server caches whole blocks of ``block_tokens``
tokens (× 4 characters), each only if every block before it was cached too, so the cached part
is the whole blocks inside the prompt's unchanged start; a partial block is always prefilled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, typed
from ..core.chart import (
    BLUE,
    GREEN,
    RED,
    Figure,
    Series,
    dashed,
    evenly,
    layout,
    line,
    measured_runs,
    these_settings,
)
from ..core.params import Param
from ..sweep.prefix_cache import repeat_cached_tokens
from ..sweep.prompts import CHARS_PER_TOKEN
from .prefill import OVERHEAD_MS, PREFILL_TOK_S, prefill_ms

SHARED_FIRST = "shared-first"
VARIABLE_FIRST = "variable-first"


def _compute(p: Params) -> dict[str, float]:
    prompt, cached = repeat_cached_tokens(
        p["prefix_chars"], p["suffix_chars"], p["order"] == SHARED_FIRST, p["block_tokens"]
    )
    uncached = prompt - cached
    cold = p["overhead_ms"] + prefill_ms(prompt, p["prefill_tok_s"])
    warm = p["overhead_ms"] + prefill_ms(uncached, p["prefill_tok_s"])
    return {
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "uncached_tokens": uncached,
        "cached_pct": 100.0 * cached / prompt,
        "ttft_cold_ms": cold,
        "ttft_warm_ms": warm,
        # Overhead 0 and a fully cached prompt would divide by zero: nothing to wait for at all.
        "speedup": cold / warm if warm > 0 else None,
    }


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    # TTFT of a repeat against the shared part's length, the variable part kept as set.
    # Half as far again as the setting, but never past the declared maximum the points are run at.
    xs = evenly(min(max(24_000, p["prefix_chars"] * 1.5), CALCULATOR.param("prefix_chars").high), 80)
    warm, variable_first, cold = [], [], []
    for x in xs:
        shared = CALCULATOR.run_with(p, prefix_chars=int(x), order="shared-first")
        warm.append(shared.value("ttft_warm_ms"))
        cold.append(shared.value("ttft_cold_ms"))
        variable = CALCULATOR.run_with(p, prefix_chars=int(x), order="variable-first")
        variable_first.append(variable.value("ttft_warm_ms"))
    data = [
        line("first request (cold)", xs, cold, BLUE),
        dashed("repeat, variable part first", xs, variable_first, RED, 2, "dash"),
        line("repeat, shared part first", xs, warm, GREEN),
        these_settings(p["prefix_chars"], CALCULATOR.run(p).value("ttft_warm_ms")),
    ]
    # The practice server's measured runs (felab_sim/prefix_runs.py): x in shared characters,
    # each point in the colour of the curve it measures.
    data += measured_runs(measured, {"cold": BLUE, "shared-first": GREEN, "variable-first": RED})
    return {
        "data": data,
        "layout": layout("characters repeated by every request", "time to first token (ms)"),
    }


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    rate, overhead = typed(p["prefill_tok_s"], "tok/s"), typed(p["overhead_ms"], "ms")
    block = f"{counted(p['block_tokens'], 'token')} × {CHARS_PER_TOKEN} characters"
    unchanged = (
        f"{typed(p['prefix_chars'])} unchanged characters"
        if p["order"] == SHARED_FIRST or p["suffix_chars"] == 0
        else "0 unchanged characters (the changing part comes first)"
    )
    return {
        "prompt_tokens": (
            f"{out('prompt_tokens')} = ({typed(p['prefix_chars'])} + {typed(p['suffix_chars'])} characters) "
            f"÷ {CHARS_PER_TOKEN}"
        ),
        "cached_tokens": f"{out('cached_tokens')} = whole blocks of {block} in {unchanged}",
        "uncached_tokens": f"{out('uncached_tokens')} = {out('prompt_tokens')} − {out('cached_tokens')}",
        "cached_pct": f"{out('cached_pct')} = {out('cached_tokens')} ÷ {out('prompt_tokens')}",
        "ttft_cold_ms": f"{out('ttft_cold_ms')} = {overhead} + 1,000 × {out('prompt_tokens')} ÷ {rate}",
        "ttft_warm_ms": f"{out('ttft_warm_ms')} = {overhead} + 1,000 × {out('uncached_tokens')} ÷ {rate}",
        "speedup": f"{out('speedup')} = {out('ttft_cold_ms')} ÷ {out('ttft_warm_ms')}",
    }


CALCULATOR = Calculator(
    name="prefix-cache",
    order=20,
    title="Prefix cache: shared part first or variable part first",
    lessons=("06",),
    meaning=(
        "A repeated prompt skips prefill only for the whole blocks of its unchanged start, so the "
        "same text put first is nearly free the second time and put after a changing line costs "
        "the full prefill every time."
    ),
    params=(
        Param(
            "prefix_chars",
            "int",
            12_120,
            "Characters every request repeats unchanged (instructions, tools, policy).",
            "chars",
            label="repeated part",
            low=0,
            high=40_000_000,
        ),
        Param(
            "suffix_chars",
            "int",
            80,
            "Characters that change from request to request (the question, a timestamp).",
            "chars",
            label="changing part",
            low=0,
            high=40_000_000,
        ),
        Param(
            "order",
            "choice",
            SHARED_FIRST,
            "Where the changing part goes: after the shared part, or before it.",
            choices={SHARED_FIRST: "shared part first", VARIABLE_FIRST: "variable part first"},
        ),
        Param(
            "block_tokens",
            "int",
            64,
            "Tokens per cache block; only whole blocks are reused.",
            "tokens",
            label="cache block",
            low=1,
            high=4096,
        ),
        OVERHEAD_MS,
        PREFILL_TOK_S,
    ),
    outputs=(
        OutputSpec("prompt_tokens", "tokens", "prompt"),
        OutputSpec("cached_tokens", "tokens", "cached on a repeat"),
        OutputSpec("uncached_tokens", "tokens", "prefilled on a repeat"),
        OutputSpec("cached_pct", "%", "share of the prompt cached"),
        OutputSpec("ttft_cold_ms", "ms", "time to first token, first request"),
        OutputSpec("ttft_warm_ms", "ms", "time to first token, repeat"),
        OutputSpec("speedup", "×", "first ÷ repeat"),
    ),
    compute=_compute,
    formulas=_formulas,
    chart=_chart,
    chart_description=(
        "Time to first token against the repeated part's length: first request, and repeats with "
        "the shared part first or last."
    ),
    examples=(
        WorkedExample(
            "lesson 06: 12,200 chars, 12,120 shared → 3,008 cached, 31.8 ms",
            {"prefix_chars": "12120", "suffix_chars": "80"},
            "ttft_warm_ms",
            "31.8 ms",
        ),
        WorkedExample(
            "lesson 06's rule: 24,000 shared characters hold 93 whole blocks of 64 tokens",
            {"prefix_chars": "24000"},
            "cached_tokens",
            "5,952 tokens",
        ),
    ),
)

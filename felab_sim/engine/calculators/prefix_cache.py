"""Prefix cache: what a repeated prompt costs, shared part first or variable part first.

Lesson 06's formulas (and lesson 03's token count). The practice server caches whole blocks of ``block_tokens``
tokens (× 4 characters), each only if every block before it was cached too, so the cached part
is the whole blocks inside the prompt's unchanged start; a partial block is always prefilled.
"""

from __future__ import annotations

from ..calculator import Calculator, OutputSpec, Params
from ..params import Param
from .prefill import OVERHEAD_MS, PREFILL_TOK_S, prefill_ms

CHARS_PER_TOKEN = 4
SHARED_FIRST = "shared-first"
VARIABLE_FIRST = "variable-first"


def tokens(chars: int) -> int:
    """The practice server's token count: about 4 characters a token, at least one (lesson 03's rule)."""
    return max(1, chars // CHARS_PER_TOKEN)


def _compute(p: Params) -> dict[str, float]:
    block_chars = p["block_tokens"] * CHARS_PER_TOKEN
    total_chars = p["prefix_chars"] + p["suffix_chars"]
    prompt = tokens(total_chars)
    # With the variable part first, a repeat differs from its first character on (no repeat
    # at all only when there is no variable part).
    unchanged_chars = p["prefix_chars"] if p["order"] == SHARED_FIRST or p["suffix_chars"] == 0 else 0
    cached = min(prompt, unchanged_chars // block_chars * p["block_tokens"])
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


CALCULATOR = Calculator(
    name="prefix-cache",
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
)

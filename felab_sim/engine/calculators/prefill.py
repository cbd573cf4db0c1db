"""Prefill: the time to first token from the prompt's length (lessons 01 and 06's formula)."""

from __future__ import annotations

from ..calculator import Calculator, OutputSpec, Params, require
from ..params import Param

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
    require(
        p["cached_tokens"] <= p["prompt_tokens"],
        "cached_tokens",
        f"cached_tokens must be at most prompt_tokens ({p['prompt_tokens']:,})",
    )


def prefill_ms(uncached_tokens: int, prefill_tok_s: float) -> float:
    return uncached_tokens / prefill_tok_s * 1000.0


def _compute(p: Params) -> dict[str, float]:
    uncached = p["prompt_tokens"] - p["cached_tokens"]
    prefill = prefill_ms(uncached, p["prefill_tok_s"])
    return {
        "ttft_ms": p["overhead_ms"] + prefill,
        "uncached_tokens": uncached,
        "prefill_ms": prefill,
    }


CALCULATOR = Calculator(
    name="prefill",
    title="Prefill and time to first token",
    lessons=("01", "06"),
    meaning=(
        "Before the first word appears the server reads the whole prompt, so the wait grows in a "
        "straight line with every token it has not cached."
    ),
    params=(PROMPT_TOKENS, CACHED_TOKENS, OVERHEAD_MS, PREFILL_TOK_S),
    outputs=(
        OutputSpec("ttft_ms", "ms", "time to first token"),
        OutputSpec("uncached_tokens", "tokens", "tokens prefilled"),
        OutputSpec("prefill_ms", "ms", "of which reading the prompt"),
    ),
    compute=_compute,
    check=_check,
)

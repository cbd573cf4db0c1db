"""Speculative decoding: when a draft model's guesses pay (lesson 13; COURSE.md F33).

A draft proposes ``draft_tokens`` (k) tokens; the target checks them in one pass and keeps the
accepted run plus one token of its own. With acceptance α the expected tokens per target pass
are 1 + α + … + α^k; drafting costs k × ``draft_cost`` of a target step.
"""

from __future__ import annotations

from ..calculator import Calculator, OutputSpec, Params
from ..params import Param


def tokens_per_pass(acceptance: float, draft_tokens: int) -> float:
    # The sum form, not (1 − α^(k+1)) ÷ (1 − α): exact at α = 1 too.
    return sum(acceptance**i for i in range(draft_tokens + 1))


def speedup(acceptance: float, draft_tokens: int, draft_cost: float) -> float:
    return tokens_per_pass(acceptance, draft_tokens) / (1 + draft_tokens * draft_cost)


def break_even_acceptance(draft_tokens: int, draft_cost: float) -> float | None:
    """The acceptance at which speculation neither helps nor hurts; None if it never pays."""
    if speedup(0.0, draft_tokens, draft_cost) >= 1:
        return 0.0
    if speedup(1.0, draft_tokens, draft_cost) < 1:
        return None
    low, high = 0.0, 1.0  # speedup rises with acceptance, so bisection finds the one crossing
    for _ in range(60):
        middle = (low + high) / 2
        if speedup(middle, draft_tokens, draft_cost) < 1:
            low = middle
        else:
            high = middle
    return high


def _compute(p: Params) -> dict[str, float | None]:
    alpha, k, cost = p["acceptance"], p["draft_tokens"], p["draft_cost"]
    gain = speedup(alpha, k, cost)
    return {
        "tokens_per_pass": tokens_per_pass(alpha, k),
        "speedup": gain,
        "break_even_acceptance": break_even_acceptance(k, cost),
        "expected_tok_s": p["baseline_tok_s"] * gain,
    }


CALCULATOR = Calculator(
    name="speculative",
    title="Speculative decoding: acceptance against draft length",
    lessons=("13",),
    meaning=(
        "A draft model's guesses save target passes only when enough of them are accepted: "
        "below the break-even acceptance, drafting more tokens makes decoding slower."
    ),
    params=(
        Param(
            "acceptance",
            "float",
            0.8,
            "Share of drafted tokens the target accepts (α): high for JSON and code, low for prose.",
            label="acceptance (α)",
            low=0,
            high=1,
        ),
        Param(
            "draft_tokens",
            "int",
            4,
            "Tokens the draft proposes per target pass (k).",
            "tokens",
            label="draft tokens (k)",
            low=1,
            high=64,
        ),
        Param(
            "draft_cost",
            "float",
            0.1,
            "One draft token's cost as a share of one target token (≈ 0.1 for 1B drafting for 8B).",
            label="draft cost (c)",
            low=0,
            high=1,
        ),
        Param(
            "baseline_tok_s",
            "float",
            62.0,
            "Decode speed without speculation (lesson 13 measured 62.0 on llama.cpp).",
            "tok/s",
            label="speed without speculation",
            low=0.01,
            high=1_000_000,
        ),
    ),
    outputs=(
        OutputSpec("tokens_per_pass", "tokens", "tokens per target pass"),
        OutputSpec("speedup", "×", "speed-up"),
        OutputSpec("break_even_acceptance", "", "acceptance where it stops paying"),
        OutputSpec("expected_tok_s", "tok/s", "expected speed with speculation"),
    ),
    compute=_compute,
)

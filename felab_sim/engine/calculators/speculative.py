"""Speculative decoding: when a draft model's guesses pay (lesson 13's formula).

A draft proposes ``draft_tokens`` (k) tokens; the target checks them in one pass and keeps the
accepted run plus one token of its own. With acceptance α the expected tokens per target pass
are 1 + α + … + α^k; drafting costs k × ``draft_cost`` of a target step, and ``draft_cost`` is
above 0: even n-gram lookup spends something per guess, and at 0 a long draft would look free.

Verifying is not free either. The verify pass reads the weights once, like one decode step, and
computes k + 1 positions; it costs max(1, (k + 1) × ``verify_cost``) target steps, where
``verify_cost`` is one position's compute as a share of a step's weight read: the roofline of
lesson 12 (a pass is memory-bound until its positions' compute outlasts the weight read). Lesson
13's formula counts the pass as 1 step; the default 0.1 keeps that true up to k = 9, so its worked
example (α 0.8, k 4 → 2.40×), its grid at k 2 to 8 and its break-even acceptances reproduce
exactly, while past k = 9 every further drafted token makes the pass dearer (at k 64 the pass
costs 6.5 steps). For lesson 13's 8B target on the course's 36 GB M4 Max, 0.1 means 16 GFLOP a
position done in a tenth of the 12 ms it takes to read the 4.9 GB file at 410 GB/s: a GPU doing
about 13 TFLOP/s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, typed
from ..core.chart import (
    BLUE,
    GREEN,
    ORANGE,
    PURPLE,
    RED,
    Figure,
    Measured,
    Series,
    dashed,
    evenly,
    layout,
    line,
    points,
    these_settings,
)
from ..core.params import Param


def tokens_per_pass(acceptance: float, draft_tokens: int) -> float:
    # The sum form, not (1 − α^(k+1)) ÷ (1 − α): exact at α = 1 too.
    return sum(acceptance**i for i in range(draft_tokens + 1))


VERIFY_COST = 0.1


def verify_pass_cost(draft_tokens: int, verify_cost: float = VERIFY_COST) -> float:
    """The target's verify pass, in decode steps: one weight read, or its compute if longer."""
    return max(1.0, (draft_tokens + 1) * verify_cost)


def round_cost(draft_tokens: int, draft_cost: float, verify_cost: float = VERIFY_COST) -> float:
    """One draft-and-verify round, in target decode steps."""
    return draft_tokens * draft_cost + verify_pass_cost(draft_tokens, verify_cost)


def speedup(
    acceptance: float, draft_tokens: int, draft_cost: float, verify_cost: float = VERIFY_COST
) -> float:
    return tokens_per_pass(acceptance, draft_tokens) / round_cost(draft_tokens, draft_cost, verify_cost)


def break_even_acceptance(
    draft_tokens: int, draft_cost: float, verify_cost: float = VERIFY_COST
) -> float | None:
    """The acceptance at which speculation neither helps nor hurts; None if it never pays."""
    if speedup(0.0, draft_tokens, draft_cost, verify_cost) >= 1:
        return 0.0
    if speedup(1.0, draft_tokens, draft_cost, verify_cost) < 1:
        return None
    low, high = 0.0, 1.0  # speedup rises with acceptance, so bisection finds the one crossing
    for _ in range(60):
        middle = (low + high) / 2
        if speedup(middle, draft_tokens, draft_cost, verify_cost) < 1:
            low = middle
        else:
            high = middle
    return high


def _compute(p: Params) -> dict[str, float | None]:
    alpha, k, cost, verify = p["acceptance"], p["draft_tokens"], p["draft_cost"], p["verify_cost"]
    gain = speedup(alpha, k, cost, verify)
    return {
        "tokens_per_pass": tokens_per_pass(alpha, k),
        "verify_pass_steps": verify_pass_cost(k, verify),
        "speedup": gain,
        "break_even_acceptance": break_even_acceptance(k, cost, verify),
        "expected_tok_s": p["baseline_tok_s"] * gain,
    }


# Lesson 13 (llama.cpp: Llama-3.1-8B Q4_K_M target, Llama-3.2-1B draft, up to 8 drafted tokens).
LESSON_13 = "llama.cpp, 8B target and 1B draft, up to 8 drafted tokens (lesson 13)"
# The speed-ups as the course states them (118 ÷ 62.0 and 70 ÷ 61.5 tok/s).
LESSON_13_RUNS = (("structured text", 0.78, 1.9), ("prose", 0.41, 1.14))


def _measured(p: Params) -> list[Measured]:
    # Measured with up to 8 drafted tokens: beside the k = 8 curve, which the chart always draws.
    if p["draft_cost"] != 0.1 or p["verify_cost"] != 0.1:
        return []
    return [
        Measured(
            f"speed-up at k 8, {kind}, α {alpha:g}", gain, "×", LESSON_13, speedup(alpha, 8, 0.1), x=alpha
        )
        for kind, alpha, gain in LESSON_13_RUNS
    ]


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    xs = evenly(1.0, 50)
    colours = {2: GREEN, 4: BLUE, 8: PURPLE}
    data = [
        line(
            f"k = {k}",
            xs,
            [speedup(a, k, p["draft_cost"], p["verify_cost"]) for a in xs],
            colours.get(k, ORANGE),
        )
        for k in sorted({2, 4, 8, p["draft_tokens"]})
    ]
    data.append(dashed("no gain (1×)", [0, 1], [1, 1], RED, 1, "dash"))
    at_settings = speedup(p["acceptance"], p["draft_tokens"], p["draft_cost"], p["verify_cost"])
    data.append(these_settings(p["acceptance"], at_settings))
    if rows := _measured(p):
        data.append(points(f"measured: {LESSON_13}", [r.x for r in rows], [r.measured for r in rows], ORANGE))
    return {"data": data, "layout": layout("acceptance α", "speed-up (×)")}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    alpha, k = typed(p["acceptance"]), p["draft_tokens"]
    powers = (
        " + ".join(["1", alpha] + [f"{alpha}^{i}" for i in range(2, k + 1)])
        if k <= 4
        else (f"1 + {alpha} + … + {alpha}^{k}")
    )
    verify = f"max(1, ({k} + 1) × {typed(p['verify_cost'])})"
    return {
        "tokens_per_pass": f"{out('tokens_per_pass')} = {powers}",
        "verify_pass_steps": f"{out('verify_pass_steps')} = {verify}",
        "speedup": (
            f"{out('speedup')} = {out('tokens_per_pass')} ÷ ({k} × {typed(p['draft_cost'])} + {out('verify_pass_steps')})"
        ),
        "break_even_acceptance": (
            f"{out('break_even_acceptance')}: the α where speed-up = 1 at {k} drafted and draft cost {typed(p['draft_cost'])}"
            if out("break_even_acceptance") != "—"
            else f"— : even α = 1 does not pay at {k} drafted and draft cost {typed(p['draft_cost'])}"
        ),
        "expected_tok_s": f"{out('expected_tok_s')} = {typed(p['baseline_tok_s'], 'tok/s')} × {out('speedup')}",
    }


CALCULATOR = Calculator(
    name="speculative",
    order=50,
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
            "One draft token's cost as a share of one target token (≈ 0.1 for 1B drafting for 8B); "
            "above 0, since no draft is free.",
            label="draft cost (c)",
            low=0,
            low_open=True,
            high=1,
        ),
        Param(
            "verify_cost",
            "float",
            VERIFY_COST,
            "One drafted position's compute in the verify pass, as a share of one target step: the "
            "pass costs max(1, (k + 1) × this) steps (0.1: free up to k = 9, lesson 13's range).",
            label="verify cost per position",
            low=0,
            low_open=True,
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
        OutputSpec("verify_pass_steps", "steps", "verify pass, in target steps"),
        OutputSpec("speedup", "×", "speed-up"),
        OutputSpec("break_even_acceptance", "", "acceptance where it stops paying", share=True),
        OutputSpec("expected_tok_s", "tok/s", "expected speed with speculation"),
    ),
    compute=_compute,
    formulas=_formulas,
    chart=_chart,
    chart_description=(
        "Speed-up against acceptance for 2, 4 and 8 drafted tokens; below 1 speculation is slower."
    ),
    measured=_measured,
    examples=(
        WorkedExample(
            "lesson 13: α 0.8, k 4 → 2.40×", {"acceptance": "0.8", "draft_tokens": "4"}, "speedup", "2.4×"
        ),
        WorkedExample(
            "lesson 13: drafting 2 tokens pays from α 0.17",
            {"draft_tokens": "2"},
            "break_even_acceptance",
            "0.17",
        ),
    ),
    note="`draft_cost` is above 0, and the verify pass costs max(1, (k + 1) × `verify_cost`) target "
    "steps (default 0.1: free up to k = 9, so lesson 13's worked examples hold exactly).",
)

"""DPO: the loss and gradient weight of one preference pair (lessons 16 and 18's formula).

The margin is how much more the policy (relative to the frozen reference) prefers the chosen
answer than the rejected one, in log-probability; β scales it. Loss = −log σ(β × margin). Its
gradient is −β × σ(−β × margin) × ∇margin, so a pair's real pull is β × σ(−β × margin): β scales
the pull as well as the margin. Lesson 18's formula calls σ(−β × margin) alone the weight (0.47 at
β 0.1, margin 1.2); that is ``fade``, the fading factor, 0.5 at the start. Read alone it
makes a small β look like a strong pull, the opposite of the truth: at margin 1.2 the pull is
0.047 at β 0.1 and 0.177 at β 0.5. A small β pulls gently but for longer (the fade reaches a
given share only at a margin 1/β times larger), which is why it lets the policy stray further.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, typed
from ..core.chart import BLUE, GREEN, ORANGE, Figure, Series, evenly, layout, line, these_settings
from ..core.params import Param, ParamError

LOGPS = ("policy_chosen_logp", "reference_chosen_logp", "policy_rejected_logp", "reference_rejected_logp")


def sigmoid(x: float) -> float:
    # Two forms so that neither overflows for a large |x|.
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    z = math.exp(x)
    return z / (1 + z)


def softplus(x: float) -> float:
    """log(1 + eˣ), exact for any x without overflow."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def margin_of(p: Params) -> float:
    given = [name for name in LOGPS if p[name] is not None]
    if not given:
        return p["margin"]
    return (p["policy_chosen_logp"] - p["reference_chosen_logp"]) - (
        p["policy_rejected_logp"] - p["reference_rejected_logp"]
    )


def _check(p: Params) -> None:
    given = [name for name in LOGPS if p[name] is not None]
    if given and len(given) < len(LOGPS):
        missing = next(name for name in LOGPS if p[name] is None)
        raise ParamError(
            missing, f"{missing} is missing: give all four log-probabilities, or none and a margin"
        )


def _compute(p: Params) -> dict[str, float]:
    margin = margin_of(p)
    scaled = p["beta"] * margin
    fade = sigmoid(-scaled)
    return {
        "margin": margin,
        "scaled_margin": scaled,
        "loss": softplus(-scaled),  # −log σ(m) = log(1 + e^(−m))
        "gradient_weight": p["beta"] * fade,
        "fade": fade,
        "preference_probability": sigmoid(scaled),
        "loss_at_start": math.log(2),
    }


def _logp(name: str, help: str, label: str) -> Param:
    return Param(name, "float", None, help, "nats", label=label, low=-1e6, high=0, optional=True)


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    # Wide enough to show the loss flatten: |β × margin| up to about 5, and the set margin inside.
    span = max(5 / p["beta"], abs(p["margin"]) * 1.2)
    xs = evenly(span, 80, -span)
    four_empty = dict.fromkeys(
        ("policy_chosen_logp", "reference_chosen_logp", "policy_rejected_logp", "reference_rejected_logp")
    )
    curve = [CALCULATOR.compute({**p, **four_empty, "margin": x}) for x in xs]
    result = CALCULATOR.run(p)
    data = [
        line("loss", xs, [point["loss"] for point in curve], BLUE),
        line("gradient weight, β × fading factor", xs, [point["gradient_weight"] for point in curve], ORANGE),
        line("fading factor σ(−β × margin)", xs, [point["fade"] for point in curve], GREEN),
        these_settings(result.value("margin"), result.value("loss")),
    ]
    return {"data": data, "layout": layout(f"margin (nats; β = {p['beta']:g})", "loss, weight")}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    beta = typed(p["beta"])
    if p["policy_chosen_logp"] is None:
        margin = f"{out('margin')}: as given"
    else:
        margin = (
            f"{out('margin')} = ({typed(p['policy_chosen_logp'])} − {typed(p['reference_chosen_logp'])}) − "
            f"({typed(p['policy_rejected_logp'])} − {typed(p['reference_rejected_logp'])})"
        )
    scaled = out("scaled_margin")
    return {
        "margin": margin,
        "scaled_margin": f"{scaled} = {beta} × {out('margin')}",
        "loss": f"{out('loss')} = log(1 + e^(−{scaled}))",
        "gradient_weight": f"{out('gradient_weight')} = {beta} × σ(−{scaled})",
        "fade": f"{out('fade')} = σ(−{scaled}) = 1 ÷ (1 + e^{scaled})",
        "preference_probability": f"{out('preference_probability')} = σ({scaled})",
        "loss_at_start": f"{out('loss_at_start')} = log 2",
    }


CALCULATOR = Calculator(
    name="dpo",
    order=100,
    title="DPO: loss and gradient weight of a preference pair",
    lessons=("16", "18"),
    meaning=(
        "DPO rewards the policy for preferring the chosen answer more than the reference does; "
        "the loss starts at ln 2 ≈ 0.693 with no margin, and a pair's pull, β × σ(−β × margin), "
        "fades as its margin grows: a small β pulls gently but for longer."
    ),
    params=(
        Param(
            "beta",
            "float",
            0.1,
            "β: how strongly the margin counts, and how hard each pair pulls (smaller pulls gently for longer, letting the policy stray further).",
            label="beta (β)",
            low=0,
            low_open=True,
            high=100,
        ),
        Param(
            "margin",
            "float",
            1.2,
            "Chosen's log-ratio minus rejected's (policy − reference); used when the four log-probabilities are empty.",
            "nats",
            low=-1e6,
            high=1e6,
        ),
        _logp(
            "policy_chosen_logp",
            "log π(chosen), the policy's summed log-probability of the chosen answer.",
            "log π(chosen)",
        ),
        _logp("reference_chosen_logp", "log π_ref(chosen), the frozen reference's.", "log π_ref(chosen)"),
        _logp(
            "policy_rejected_logp",
            "log π(rejected), the policy's for the rejected answer.",
            "log π(rejected)",
        ),
        _logp(
            "reference_rejected_logp", "log π_ref(rejected), the frozen reference's.", "log π_ref(rejected)"
        ),
    ),
    outputs=(
        OutputSpec("margin", "nats", "margin"),
        OutputSpec("scaled_margin", "", "β × margin"),
        OutputSpec("loss", "", "DPO loss"),
        OutputSpec("gradient_weight", "", "gradient weight β × σ(−β × margin)"),
        OutputSpec("fade", "", "fading factor σ(−β × margin), 0.5 at the start"),
        OutputSpec("preference_probability", "", "implied probability chosen is preferred", share=True),
        OutputSpec("loss_at_start", "", "loss with no margin (ln 2)"),
    ),
    compute=_compute,
    formulas=_formulas,
    check=_check,
    chart=_chart,
    chart_description="DPO loss, gradient weight and its fading factor against the margin.",
    examples=(
        WorkedExample(
            "lesson 18: β 0.1, margin 1.2 (m 0.12) → loss 0.635",
            {"beta": "0.1", "margin": "1.2"},
            "loss",
            "0.63",
        ),
        WorkedExample(
            "lesson 18's pair at β 0.5 pulls harder: 0.5 × σ(−0.6) = 0.177",
            {"beta": "0.5"},
            "gradient_weight",
            "0.18",
        ),
    ),
    note="Give `margin` (default 1.2, lesson 18's +0.8 and −0.4 log-ratios), or all four `*_logp` "
    "values (then `margin` is ignored). `gradient_weight` is the real pull, β × σ(−β × margin); "
    'lesson 18\'s "weight σ(−m) = 0.47" is `fade`.',
)

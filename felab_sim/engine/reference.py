"""The calculators' reference in Markdown (docs/calculators.md), generated from their declarations.

The whole file is this module's output and tests/test_docs.py checks it is current, so the
document content writers read can never drift from the code. Regenerate with
``python manage.py calc --reference > docs/calculators.md``. The notes below are what a
declaration cannot say: how to reproduce a lesson's worked example, and which defaults are
illustrative.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .calculators import CALCULATORS
from .params import heading

DOC = Path(__file__).resolve().parents[2] / "docs" / "calculators.md"
COMMAND = "python manage.py calc --reference > docs/calculators.md"

INTRO = f"""# felab: the calculators' reference

Generated from the calculators' declarations by `{COMMAND}`; do not edit by hand
(tests/test_docs.py fails until the file is regenerated). How a calculator is declared, served
and added: docs/architecture.md, "Calculators".

Every parameter below is a query-string key of `/sim/calc/NAME/` and `/sim/calc/NAME.json`, a
`calc NAME --flag` (dashes for underscores) and a field of the admin's parameter sets; every
output key may be cited in a card as `{{{{calc.SET_SLUG.OUTPUT_KEY}}}}`. An output is a number, a
word for a few (`roofline.bound`, `sizing.cheaper`) or empty where the inputs leave it undefined
(`decode-ceiling.efficiency_pct` without `measured_tok_s`, `speculative.break_even_acceptance`
when drafting never pays, `sizing.crossover_tickets_month` with free tokens,
`prefix-cache.speedup` with zero overhead and a fully cached prompt).
GB and MB are 10⁹ and 10⁶ bytes (spec sheets, the course); `kv-cache` also gives KiB and MiB."""

# What each calculator's declaration cannot say, shown under its heading.
NOTES: dict[str, str] = {
    "decode-ceiling": (
        "The course's ceilings use the model *files'* sizes (Q4_K_M 8B ≈ 4.9 GB, Q8_0 8.5, "
        "Q3_K_M 4.0), not params × bits ÷ 8 (8 × 4.8 ÷ 8 = 4.8 GB → 113.8 tok/s at 546 GB/s): to "
        "reproduce 546 ÷ 4.9 = 111.4, give `model_gb: 4.9`. `bits_per_weight`, when given, wins "
        "over `quant`."
    ),
    "sizing": (
        "`dedicated_usd_month` uses `replicas_with_headroom` = ceil(peak × (1 + headroom) ÷ capacity). "
        "The defaults are lesson 15's capstone scenario on one replica that holds 256, so they give "
        "its worked example ($375 against $5,840, crossover ≈ 78M); the practice server's 8 users "
        "per replica must be set (`capacity: 8`)."
    ),
    "finetune-memory": (
        "`adapter_mb` is the file training saves (for `full`, the whole model in bf16). The shape must "
        "hold within 10% of `params_b`, or the calculator refuses naming both counts; "
        "`adapted_layers` adapts only the last N. Lesson 11's qlora_memory treats every target as "
        "hidden × hidden: reproduce it with `kv_heads` equal to `heads` (`params_b: 7.6, layers: 28, "
        "adapted_layers: 8, hidden: 3584, heads: 28, kv_heads: 28, mlp_hidden: 18944, vocab: 152064, "
        "rank: 8, method: qlora, activations_gb: 2` → 1.84M, 6.3 GB, 3.7 MB). Its 70B run, which "
        "keeps the 7B's hidden 3,584, is refused: the card uses Llama-3.1-70B's shape (65.5M, 42.4 GB)."
    ),
    "speculative": (
        "`draft_cost` is above 0, and the verify pass costs max(1, (k + 1) × `verify_cost`) target "
        "steps (default 0.1: free up to k = 9, so lesson 13's worked examples hold exactly)."
    ),
    "dpo": (
        "Give `margin` (default 1.2, lesson 18's +0.8 and −0.4 log-ratios), or all four `*_logp` "
        "values (then `margin` is ignored). `gradient_weight` is the real pull, β × σ(−β × margin); "
        'lesson 18\'s "weight σ(−m) = 0.47" is `fade`.'
    ),
    "cost": (
        "`training_usd_per_m` (0.50) and `cached_price_ratio` (0.5) are illustrative: the course "
        "publishes neither."
    ),
}


def _default(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"`{value}`"


def markdown() -> str:
    """The whole of docs/calculators.md."""
    lines = [INTRO, ""]
    for calculator in CALCULATORS.values():
        lines += [
            f"## `{calculator.name}`: {calculator.title}",
            "",
            f"{heading(calculator.lessons_text)}. {calculator.meaning}",
            "",
        ]
        if calculator.name in NOTES:
            lines += [f"Note: {NOTES[calculator.name]}", ""]
        lines += [
            "| parameter | default | unit | accepts | help |",
            "| --- | --- | --- | --- | --- |",
        ]
        for param in calculator.params:
            accepts = (
                ", ".join(f"`{c}`" for c in param.choices)
                if param.choices
                else param.rule().split(" must be ")[1]
            )
            lines.append(
                f"| `{param.name}` | {_default(param.default)} | {param.unit} | {accepts} | {param.help} |"
            )
        lines += ["", "| output key | unit | label |", "| --- | --- | --- |"]
        lines += [f"| `{spec.key}` | {spec.unit} | {spec.label} |" for spec in calculator.outputs]
        lines.append("")
    return "\n".join(lines)


def write(path: Path = DOC) -> None:
    path.write_text(markdown())


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        sys.stdout.write(markdown())

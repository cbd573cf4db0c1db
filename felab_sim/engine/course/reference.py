"""The calculators' reference in Markdown (docs/calculators.md), generated from their declarations.

The whole file is this module's output and tests/test_docs.py checks it is current, so the
document content writers read can never drift from the code. Regenerate with
``python manage.py calc --reference > docs/calculators.md``. Each calculator's ``note`` says
what its declaration cannot: how to reproduce a lesson's worked example, and which defaults are
illustrative.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..calculators import CALCULATORS
from ..core.params import heading

DOC = Path(__file__).resolve().parents[3] / "docs" / "calculators.md"
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
        if calculator.note:
            lines += [f"Note: {calculator.note}", ""]
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

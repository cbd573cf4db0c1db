"""What the calculator tests share: a calculator's outputs by key, and the worked example the
browser test types into a page."""

from __future__ import annotations

from felab_sim.engine.calculators import get
from felab_sim.engine.core.calculator import Calculator, WorkedExample


def outputs(name: str, **params: object) -> dict[str, object]:
    return {key: out.value for key, out in get(name).run(params).outputs.items()}


def typed_example(calculator: Calculator) -> tuple[str, WorkedExample] | None:
    """The first worked example that changes one field a visitor types into (not a menu) from
    its default, with that field's name: typing it in must show the example's number."""
    for example in calculator.examples:
        changed = calculator.changed(calculator.validate(example.params))
        if len(changed) == 1:
            (name,) = changed
            if calculator.param(name).kind in ("int", "float"):
                return name, example
    return None

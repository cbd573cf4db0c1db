"""What every calculator is: declared parameters, declared outputs and one compute function.

A calculator module (``felab_sim/engine/calculators/*.py``) builds one :class:`Calculator`. The
registry in ``felab_sim/engine/calculators/__init__.py`` lists them; docs/architecture.md says
how to add one. Pure Python: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from .numbers import MISSING, format_figure, format_number
from .params import Param, ParamError, ParamValue, parse_all

__all__ = ["Calculator", "Output", "OutputSpec", "Params", "Result"]

Params = Mapping[str, ParamValue]
# A number, or a word where the answer is a category (the roofline's "memory" or "compute");
# None only where the inputs leave a figure undefined, which the output's help says.
OutputValue = float | int | str | None


class OutputSpec(NamedTuple):
    """A declared output: cards cite it by ``key``, so it is checked before anything is computed."""

    key: str
    unit: str
    label: str


class Output(NamedTuple):
    value: OutputValue
    unit: str
    label: str

    def text(self) -> str:
        """The value as a page prints it, by the site's one rule; dollars lead ("$0.029")."""
        if isinstance(self.value, str):
            return self.value
        if self.unit == "$":
            number = format_number(self.value)
            return number if number == MISSING else "$" + number
        return format_figure(self.value, self.unit)


@dataclass(frozen=True)
class Result:
    calculator: str
    params: dict[str, ParamValue]
    outputs: dict[str, Output]

    def value(self, key: str) -> OutputValue:
        return self.outputs[key].value

    def as_json(self) -> dict[str, object]:
        """The one JSON shape of the CLI and ``/sim/calc/NAME.json``."""
        return {
            "calculator": self.calculator,
            "params": dict(self.params),
            "outputs": {
                key: {"value": out.value, "unit": out.unit, "label": out.label}
                for key, out in self.outputs.items()
            },
        }


@dataclass(frozen=True)
class Calculator:
    """One live calculator.

    ``check`` refuses combinations each parameter's own range cannot (e.g. more cached tokens
    than the prompt has) by raising :class:`ParamError` naming the parameter to fix.
    ``compute`` returns a value for every declared output key and nothing else.
    """

    name: str
    title: str
    lessons: tuple[str, ...]
    meaning: str  # one sentence: what the numbers mean, shown on the page
    params: tuple[Param, ...]
    outputs: tuple[OutputSpec, ...]
    compute: Callable[[Params], Mapping[str, OutputValue]]
    check: Callable[[Params], None] | None = None

    def __post_init__(self) -> None:
        names = [param.name for param in self.params]
        keys = [spec.key for spec in self.outputs]
        if len(set(names)) != len(names) or len(set(keys)) != len(keys):
            raise TypeError(f"{self.name}: a parameter or output is declared twice")

    @property
    def lessons_text(self) -> str:
        """ "lesson 06" or "lessons 00, 04, 12": the lessons it belongs to, in words."""
        noun = "lesson" if len(self.lessons) == 1 else "lessons"
        return f"{noun} {', '.join(self.lessons)}"

    @property
    def output_keys(self) -> tuple[str, ...]:
        return tuple(spec.key for spec in self.outputs)

    @property
    def defaults(self) -> dict[str, ParamValue]:
        return {param.name: param.default for param in self.params}

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    def validate(self, raw: Mapping[str, object]) -> dict[str, ParamValue]:
        """All parameters, checked, defaults filled in; ``ParamError`` naming the first bad one."""
        values = parse_all(self.params, raw, owner=self.name)
        if self.check:
            self.check(values)
        return values

    def changed(self, values: Params) -> dict[str, ParamValue]:
        """Only the values that differ from the defaults (how parameter sets store them)."""
        return {name: value for name, value in values.items() if value != self.param(name).default}

    def run(self, raw: Mapping[str, object]) -> Result:
        values = self.validate(raw)
        computed = self.compute(values)
        if set(computed) != set(self.output_keys):
            raise AssertionError(f"{self.name}: computed {sorted(computed)}, declared {self.output_keys}")
        outputs = {
            spec.key: Output(_defined(computed[spec.key]), spec.unit, spec.label) for spec in self.outputs
        }
        return Result(self.name, values, outputs)

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "lessons": list(self.lessons),
            "meaning": self.meaning,
            "params": [param.as_json() for param in self.params],
            "outputs": [{"key": s.key, "unit": s.unit, "label": s.label} for s in self.outputs],
        }


def _defined(value: OutputValue) -> OutputValue:
    """None for a quotient that overflowed: inputs near a range's edge (a tiny price, a tiny
    overhead) can leave a figure with no finite value, which JSON cannot carry."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def require(condition: bool, param: str, message: str) -> None:
    """A cross-parameter rule for ``check`` functions."""
    if not condition:
        raise ParamError(param, message)

"""What every calculator is: declared parameters and outputs, one compute function, its chart,
the course's measurements beside it and its worked examples.

A calculator module (``felab_sim/engine/calculators/NAME.py``) builds one :class:`Calculator`;
``felab_sim/engine/calculators/__init__.py`` discovers them. docs/architecture.md ("Adding a
calculator") says how to add one. Pure Python: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .chart import Figure, Measured, Series
from .numbers import MISSING, format_with_unit
from .params import Param, ParamError, ParamValue, parse_all

__all__ = [
    "Calculator",
    "Formulas",
    "Output",
    "OutputSpec",
    "Params",
    "Result",
    "WorkedExample",
    "counted",
    "typed",
]

Params = Mapping[str, ParamValue]
# A number, or a word where the answer is a category (the roofline's "memory" or "compute");
# None only where the inputs leave a number undefined, which the output's help says.
OutputValue = float | int | str | None


class OutputSpec(NamedTuple):
    """A declared output: cards cite it by ``key``, so it is checked before anything is computed."""

    key: str
    unit: str
    label: str
    share: bool = False  # a share or probability from 0 to 1: a bare 45 typed for it reads as 45%?


class Output(NamedTuple):
    value: OutputValue
    unit: str
    label: str
    # The output's formula with the settings' numbers in it: "131,072 B = 2 × 32 layers × ...".
    formula: str = ""

    def text(self) -> str:
        """The value as a page prints it, by the site's one rule; dollars lead, to the cent ("$0.60", "$0.029")."""
        if isinstance(self.value, str):
            return self.value
        return format_with_unit(self.value, self.unit)


class WorkedExample(NamedTuple):
    """A worked example from the course: its settings as a query string sends them, and the
    output it names as a page prints it. Tests hold every calculator to its examples, the
    benchmark shows the first, and the browser test types in the first that changes one field."""

    what: str  # where it comes from and what it says: "lesson 01: 8,000 tokens → 3,215 ms"
    params: Mapping[str, str]
    output: str
    shown: str


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
                key: {"value": out.value, "unit": out.unit, "label": out.label, "formula": out.formula}
                for key, out in self.outputs.items()
            },
        }


def _nothing_measured(params: Params) -> list[Measured]:
    return []


# Each output's formula written with the settings' numbers, by output key; given the validated
# settings and a function that prints an output as the page does ("131,072 B").
Formulas = Callable[[Params, Callable[[str], str]], Mapping[str, str]]


def typed(value: ParamValue, unit: str = "") -> str:
    """A setting as a person typed it, inside a formula: every digit that matters (1.0625, 85.9),
    commas between thousands (131,072), and its unit if it has one."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        text = MISSING if value is None else str(value)
    elif float(value).is_integer() and abs(value) < 1e15:
        text = f"{int(value):,}"
    else:
        text = f"{value:,.6g}"
    if unit == "$":
        return "$" + text
    return f"{text}{unit}" if unit in {"%", "×"} or not unit else f"{text} {unit}"


def counted(value: int | float, noun: str) -> str:
    """ "1 GPU", "8 GPUs", "8,192 tokens": a count and its noun, plural unless it is one."""
    return f"{typed(value)} {noun}" if value == 1 else f"{typed(value)} {noun}s"


@dataclass(frozen=True, kw_only=True)
class Calculator:
    """One live calculator.

    ``check`` refuses combinations each parameter's own range cannot (e.g. more cached tokens
    than the prompt has) by raising :class:`ParamError` naming the parameter to fix.
    ``compute`` returns a value for every declared output key and nothing else. ``chart``
    describes the page's chart for validated settings and any measured runs drawn over it;
    ``measured`` gives the course's published measurements that apply at those settings.
    """

    name: str
    order: int  # its place in every list of calculators (pages, the CLI, docs/calculators.md)
    title: str
    lessons: tuple[str, ...]
    meaning: str  # one sentence: what the numbers mean, shown on the page
    params: tuple[Param, ...]
    outputs: tuple[OutputSpec, ...]
    compute: Callable[[Params], Mapping[str, OutputValue]]
    check: Callable[[Params], None] | None = None
    chart: Callable[[Params, Sequence[Series]], Figure]
    chart_description: str  # one line under the chart, and its text without JavaScript
    measured: Callable[[Params], list[Measured]] = _nothing_measured
    examples: tuple[WorkedExample, ...]
    note: str = ""  # what the declaration cannot say, under its heading in docs/calculators.md
    formulas: Formulas | None = None
    # Whether compute runs a simulation's loop (the continuous-batching engine): the web computes
    # it under one of the host's simulation permits (felab_sim/pages/permits.py).
    simulates: bool = False

    def __post_init__(self) -> None:
        names = [param.name for param in self.params]
        keys = [spec.key for spec in self.outputs]
        if len(set(names)) != len(names) or len(set(keys)) != len(keys):
            raise TypeError(f"{self.name}: a parameter or output is declared twice")
        for example in self.examples:
            if example.output not in keys or not set(example.params) <= set(names):
                raise TypeError(
                    f"{self.name}: worked example {example.what!r} names no such parameter or output"
                )

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

    def run_with(self, params: Params, **changes: ParamValue) -> Result:
        """The result at validated settings with some of them changed (a chart's points), without
        the formulas no chart shows."""
        return self.run({**params, **changes}, with_formulas=False)

    def compute_with(self, key: str, params: Params, **changes: ParamValue) -> OutputValue:
        """One output at validated settings varied within the declared ranges along a chart's
        axis: the compute function alone, since validating every point would cost more than
        the curve."""
        return self.compute({**params, **changes})[key]

    def validate(self, raw: Mapping[str, object]) -> dict[str, ParamValue]:
        """All parameters, checked, defaults filled in; ``ParamError`` naming the first bad one."""
        values = parse_all(self.params, raw, owner=self.name)
        if self.check:
            self.check(values)
        return values

    def changed(self, values: Params) -> dict[str, ParamValue]:
        """Only the values that differ from the defaults (how parameter sets store them)."""
        return {name: value for name, value in values.items() if value != self.param(name).default}

    def run(self, raw: Mapping[str, object], *, with_formulas: bool = True) -> Result:
        values = self.validate(raw)
        computed = self.compute(values)
        if set(computed) != set(self.output_keys):
            raise AssertionError(f"{self.name}: computed {sorted(computed)}, declared {self.output_keys}")
        outputs = {
            spec.key: Output(_defined(computed[spec.key]), spec.unit, spec.label) for spec in self.outputs
        }
        if with_formulas and self.formulas is not None:
            written = self.formulas(values, lambda key: outputs[key].text())
            if not set(written) <= set(outputs):
                raise AssertionError(f"{self.name}: formulas for {sorted(set(written) - set(outputs))}")
            outputs = {key: out._replace(formula=written.get(key, "")) for key, out in outputs.items()}
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
    overhead) can leave a number with no finite value, which JSON cannot carry."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def require(condition: bool, param: str, message: str) -> None:
    """A cross-parameter rule for ``check`` functions."""
    if not condition:
        raise ParamError(param, message)

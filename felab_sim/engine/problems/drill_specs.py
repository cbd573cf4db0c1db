"""Practice templates as the engine reads them: a template (``DrillSpec``), how each of its inputs is
drawn (``Draw``), the question's ``{placeholders}`` and how a drawn value prints in them, and the
settings after the template's change. A template's fields are read here; drawing a problem from
one and checking it before it is saved are felab_sim/engine/problems/drills.py's, the drawn
problem's reading and grading felab_sim/engine/problems/drill_problems.py's.

Pure Python: no Django.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..calculators import CALCULATORS
from ..core.calculator import Calculator
from ..core.numbers import format_money, format_number
from ..core.params import ParamValue
from .mistakes import Mistake, MistakeError

__all__ = [
    "ASKS",
    "PLACEHOLDER",
    "Draw",
    "DrillError",
    "DrillSpec",
    "changed_inputs",
    "fill",
    "is_money",
    "shown_value",
]

Asks = Literal["value", "after", "ratio"]
ASKS: dict[str, str] = {
    "value": "the output at the drawn settings",
    "after": "the output after the change",
    "ratio": "the output after the change ÷ before it",
}
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)\}")
# A log range draws this many significant digits, so a problem reads "3,400 tokens", not "3,417.6".
LOG_DIGITS = 2


class DrillError(ValueError):
    """A template that cannot be drawn, with the field to fix."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class Draw:
    """How one input (or, for presets, a group of inputs under one name) is drawn."""

    name: str
    values: tuple[ParamValue, ...] = ()
    presets: tuple[tuple[str, Mapping[str, ParamValue]], ...] = ()  # (label, inputs)
    low: float | None = None
    high: float | None = None
    step: float | None = None
    log: bool = False

    @classmethod
    def from_data(cls, data: object) -> Draw:
        """A draw as content files and the admin write it (see ``as_data``)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
            raise DrillError("draws", f"each draw is a mapping with a name; got {str(data)[:80]!r}")
        name = data["name"]
        kinds = [key for key in ("values", "presets", "range", "log") if key in data]
        if len(kinds) != 1:
            raise DrillError("draws", f"draw {name}: give exactly one of values, presets, range or log")
        kind = kinds[0]
        if kind == "values":
            values = data["values"]
            if not isinstance(values, list) or not values:
                raise DrillError("draws", f"draw {name}: values must be a non-empty list")
            return cls(name, values=tuple(values))
        if kind == "presets":
            presets = data["presets"]
            if not isinstance(presets, list) or not presets:
                raise DrillError("draws", f"draw {name}: presets must be a non-empty list")
            parsed = []
            for preset in presets:
                if (
                    not isinstance(preset, Mapping)
                    or not isinstance(preset.get("label"), str)
                    or not isinstance(preset.get("inputs"), Mapping)
                    or not preset["inputs"]
                ):
                    raise DrillError("draws", f"draw {name}: each preset has a label and inputs")
                parsed.append((preset["label"], dict(preset["inputs"])))
            return cls(name, presets=tuple(parsed))
        bounds = data[kind]
        if (
            not isinstance(bounds, list)
            or len(bounds) != 2
            or not all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds)
        ):
            raise DrillError("draws", f"draw {name}: {kind} must be [low, high]")
        low, high = float(bounds[0]), float(bounds[1])
        if not low < high:
            raise DrillError("draws", f"draw {name}: {kind} must have low below high")
        if kind == "log":
            if low <= 0:
                raise DrillError("draws", f"draw {name}: a log range starts above 0")
            return cls(name, low=low, high=high, log=True)
        step = data.get("step")
        if not isinstance(step, int | float) or isinstance(step, bool) or step <= 0:
            raise DrillError("draws", f"draw {name}: a range needs a step above 0")
        return cls(name, low=low, high=high, step=float(step))

    def as_data(self) -> dict[str, object]:
        if self.values:
            return {"name": self.name, "values": list(self.values)}
        if self.presets:
            return {
                "name": self.name,
                "presets": [{"label": label, "inputs": dict(inputs)} for label, inputs in self.presets],
            }
        bounds = [_plain(self.low), _plain(self.high)]
        if self.log:
            return {"name": self.name, "log": bounds}
        return {"name": self.name, "range": bounds, "step": _plain(self.step)}

    @property
    def inputs(self) -> tuple[str, ...]:
        """The calculator inputs this draw sets."""
        if self.presets:
            return tuple(dict.fromkeys(key for _, inputs in self.presets for key in inputs))
        return (self.name,)

    def pick(self, rng: random.Random) -> tuple[dict[str, ParamValue], ParamValue | str]:
        """The inputs drawn, and what the question shows for the placeholder."""
        if self.presets:
            label, inputs = rng.choice(self.presets)
            return dict(inputs), label
        if self.values:
            value = rng.choice(self.values)
            return {self.name: value}, value
        assert self.low is not None and self.high is not None
        if self.log:
            value = _significant(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))
            value = min(max(value, self.low), self.high)
        else:
            assert self.step is not None
            steps = math.floor((self.high - self.low) / self.step + 1e-9)
            value = round(self.low + rng.randint(0, steps) * self.step, 10)
        return {self.name: value}, value

    def extremes(self) -> list[dict[str, ParamValue]]:
        """The draws at its edges: each preset, the smallest and largest value, a range's ends."""
        if self.presets:
            return [dict(inputs) for _, inputs in self.presets]
        if self.values:
            numbers = [v for v in self.values if isinstance(v, int | float) and not isinstance(v, bool)]
            if len(numbers) == len(self.values):
                return [{self.name: min(numbers)}, {self.name: max(numbers)}]
            return [{self.name: value} for value in self.values]
        assert self.low is not None and self.high is not None
        if self.log:
            return [{self.name: self.low}, {self.name: self.high}]
        assert self.step is not None
        steps = math.floor((self.high - self.low) / self.step + 1e-9)
        return [{self.name: self.low}, {self.name: round(self.low + steps * self.step, 10)}]


@dataclass(frozen=True)
class DrillSpec:
    """A practice template as the engine reads it (lessons' PracticeTemplate carries the same fields)."""

    slug: str
    calculator: str
    output: str
    question: str
    draws: tuple[Draw, ...]
    fixed: Mapping[str, ParamValue] = field(default_factory=dict)
    change: Mapping[str, float] = field(default_factory=dict)
    asks: str = "value"
    tolerance: float = 0.1
    unit: str = ""
    solution: str = ""
    mistakes: tuple[Mistake, ...] = ()

    @classmethod
    def from_data(cls, slug: str, data: Mapping[str, object]) -> DrillSpec:
        """From a content file's or a model's fields; ``DrillError`` naming the field if unreadable."""
        draws = data.get("draws") or []
        if not isinstance(draws, list):
            raise DrillError("draws", "draws must be a list")
        fixed = data.get("fixed") or {}
        change = data.get("change") or {}
        for name, value in (("fixed", fixed), ("change", change)):
            if not isinstance(value, Mapping):
                raise DrillError(name, f"{name} must be a mapping of input names to values")
        raw_mistakes = data.get("mistakes") or []
        if not isinstance(raw_mistakes, list):
            raise DrillError("mistakes", "mistakes must be a list")
        try:
            mistakes = tuple(Mistake.from_data(m) for m in raw_mistakes)
        except MistakeError as error:
            raise DrillError("mistakes", error.message) from None
        tolerance = data.get("tolerance", 0.1)
        if not isinstance(tolerance, int | float) or isinstance(tolerance, bool) or not 0 < tolerance < 1:
            raise DrillError(
                "tolerance", "tolerance must be a fraction above 0 and below 1, e.g. 0.1 for 10%"
            )
        return cls(
            slug=slug,
            calculator=str(data.get("calculator", "")),
            output=str(data.get("output", "")),
            question=str(data.get("question", "")),
            draws=tuple(Draw.from_data(d) for d in draws),
            fixed=dict(fixed),
            change=dict(change),
            asks=str(data.get("asks") or "value"),
            tolerance=float(tolerance),
            unit=str(data.get("unit") or ""),
            solution=str(data.get("solution") or ""),
            mistakes=mistakes,
        )

    @property
    def calc(self) -> Calculator:
        return CALCULATORS[self.calculator]

    @property
    def answer_unit(self) -> str:
        """The unit the answer is given in: the template's, else the output's; a ratio has none."""
        if self.asks == "ratio":
            return "×"
        return self.unit or self.calc.outputs[self.calc.output_keys.index(self.output)].unit

    def placeholder_names(self) -> set[str]:
        """What the question may name: each draw, the inputs its presets set, each fixed input."""
        return {d.name for d in self.draws} | {n for d in self.draws for n in d.inputs} | set(self.fixed)


def fill(text: str, values: Mapping[str, str]) -> str:
    """The text with each ``{name}`` replaced; an unknown name stays as written (refused on save)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def changed_inputs(calc: Calculator, params: Mapping[str, ParamValue], change: Mapping[str, float]) -> dict:
    """The settings after a template's change: each named input times its factor, an integer
    input rounded."""
    changed = dict(params)
    for name, factor in change.items():
        value = changed[name]
        assert isinstance(value, int | float)
        scaled = value * factor
        changed[name] = round(scaled) if calc.param(name).kind == "int" else scaled
    return changed


def _significant(value: float, digits: int = LOG_DIGITS) -> float:
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def _plain(value: float | None) -> float | int | None:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def is_money(spec: DrillSpec, name: str) -> bool:
    """The input is a price or a bill ("$/M tokens", "$/h"): its question and steps print cents."""
    return any(param.name == name and param.unit.startswith("$") for param in spec.calc.params)


def shown_value(value: object, money: bool = False) -> str:
    """A drawn value as the question prints it: a number by the site's rule (money to the cent),
    a word as it is."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if money and isinstance(value, int | float):
        return format_money(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return format_number(int(value))
    if isinstance(value, int | float):
        return format_number(value)
    return str(value)

"""Named mistakes: the wrong answers a practice template's students commonly give, each computed
from the same draw as the right one. Pure Python: no Django.

A template declares its mistakes (docs/practice.md, "Named mistakes"); each is the calculator run
the wrong way, e.g. K and V counted once (``change: {kv_heads: 0.5}``), every parameter read for
an MoE's active ones (``set: {active_params_b: "=params_b"}``), the list price instead of the
batch one (``output: usd_per_1k_tasks``), bits taken for bytes (``factor: 0.125``). An answer
within the tolerance of a mistake's value that is not right, or is nearer the mistake than the
right value, is that mistake, and the page says which in one sentence with what to check.

A mistake is offered for a draw where its value stands more than half the tolerance from the right
answer (closer, it is the right answer rounded), and no answer could match both it and an earlier
mistake of the same draw (their tolerance bands do not touch): a mistake never names another's.
A mistake may lie within the tolerance of the right answer (bytes ÷ 2³⁰ where ÷ 10⁹ is asked is
6.9% low, the tolerance 10%): an answer nearer it than the right value is that mistake, not right.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.params import ParamError, ParamValue
from .answers import convert, unit_problem
from .formulas import Formula

# A drill_problems.Problem and drill_specs.DrillSpec (both import this module, so not the reverse).
Problem = Any
DrillSpec = Any

__all__ = [
    "Mistake",
    "NamedMistake",
    "formula_names",
    "formula_numbers",
    "matching",
    "mistake_problems",
    "offered",
]

SLUG = re.compile(r"^[a-z][a-z0-9-]*$")
# A draw's number named in a worked step or a mistake's sentence: "{output_usd_per_m}", "{out.KEY}",
# or with significant digits, "{out.kv_gb_per_conversation:4}", where a later step computes from it:
# every printed step must hold to the digits it shows (drill_problems.Problem.in_numbers fills them).
NUMBER_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)(?::([1-9]))?\}")
KEYS = ("slug", "says", "set", "change", "output", "input", "divide", "before", "factor", "add", "value",
        "invert", "complement", "floor")  # fmt: skip


class MistakeError(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Mistake:
    """One named mistake as a template declares it."""

    slug: str
    says: str  # one sentence: what the answer is, and what to check
    set: Mapping[str, ParamValue] = field(default_factory=dict)  # inputs set; "=NAME" copies one
    change: Mapping[str, float] = field(default_factory=dict)  # inputs multiplied
    output: str = ""  # another output read instead of the template's
    input: str = ""  # an input's own value (the draft's cost taken for the answer)
    divide: str = ""  # ÷ another output (a ratio of two outputs)
    before: bool = False  # read before the template's change
    factor: float = 1.0
    add: float = 0.0
    value: float | None = None  # a constant answer ("exactly 2×")
    invert: bool = False  # 1 ÷ the value
    complement: bool = False  # 1 − the value
    floor: bool = False  # rounded down
    # An instructor's formula over the draw's numbers (formula_numbers), named from the class's
    # answers in the admin rather than in a template's file.
    formula: Formula | None = None

    @classmethod
    def from_data(cls, data: object) -> Mistake:
        if not isinstance(data, Mapping) or not isinstance(data.get("slug"), str):
            raise MistakeError(f"each mistake is a mapping with a slug; got {str(data)[:80]!r}")
        slug = data["slug"]
        if not SLUG.match(slug):
            raise MistakeError(f"mistake {slug!r}: a slug is lower-case words joined by hyphens")
        if unknown := set(data) - set(KEYS):
            raise MistakeError(f"mistake {slug}: no field {sorted(unknown)[0]!r}; fields: {', '.join(KEYS)}")
        says = data.get("says")
        if not isinstance(says, str) or not says.strip():
            raise MistakeError(f"mistake {slug}: says what the answer is and what to check")
        for name in ("set", "change"):
            if not isinstance(data.get(name, {}), Mapping):
                raise MistakeError(f"mistake {slug}: {name} maps input names to values")
        numbers = {}
        for name in ("factor", "add", "value"):
            value = data.get(name)
            if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
                raise MistakeError(f"mistake {slug}: {name} is a number")
            numbers[name] = value
        if numbers["factor"] is not None and numbers["factor"] <= 0:
            raise MistakeError(f"mistake {slug}: factor is above 0")
        return cls(
            slug=slug,
            says=says.strip(),
            set=dict(data.get("set") or {}),
            change=dict(data.get("change") or {}),
            output=str(data.get("output") or ""),
            input=str(data.get("input") or ""),
            divide=str(data.get("divide") or ""),
            before=bool(data.get("before", False)),
            factor=float(numbers["factor"] if numbers["factor"] is not None else 1.0),
            add=float(numbers["add"] or 0.0),
            value=None if numbers["value"] is None else float(numbers["value"]),
            invert=bool(data.get("invert", False)),
            complement=bool(data.get("complement", False)),
            floor=bool(data.get("floor", False)),
        )

    def value_for(self, problem: Problem) -> float | None:
        """This mistake's answer to the problem, in the answer's unit; None where it has none."""
        if self.formula is not None:
            found = self.formula.value(formula_numbers(problem))
            if found is None:
                return None
            value: float = found
        elif self.value is not None:
            value = self.value
        elif self.input:
            given = problem.before.params.get(self.input)
            if not isinstance(given, int | float) or isinstance(given, bool):
                return None
            value = float(given)
        else:
            found = self._raw(problem)
            if found is None:
                return None
            value = found
        if self.divide:
            other = self._result(problem).value(self.divide)
            if not isinstance(other, int | float) or not other:
                return None
            value /= float(other)
        if self.invert:
            value = 1 / value if value else math.inf
        if self.complement:
            value = 1 - value
        if self.floor:
            value = math.floor(value + 1e-9)
        value = value * self.factor + self.add
        return value if math.isfinite(value) and value > 0 else None

    def _result(self, problem: Problem):  # -> Result
        if not self.set and not self.change:
            return problem.before if self.before or problem.after is None else problem.after
        return self._rerun(problem)[0 if self.before else 1]

    def _rerun(self, problem: Problem):  # -> (before, after) Results
        calc = problem.spec.calc
        drawn = problem.before.params
        inputs: dict[str, ParamValue] = dict(drawn)
        # "=NAME" copies the drawn value, so a swap reads both sides before either is set.
        for name, value in self.set.items():
            inputs[name] = drawn.get(value[1:]) if isinstance(value, str) and value.startswith("=") else value
        for name, factor in self.change.items():
            current = inputs[name]
            assert isinstance(current, int | float)
            inputs[name] = round(current * factor) if calc.param(name).kind == "int" else current * factor
        return problem.rerun(inputs)

    def _raw(self, problem: Problem) -> float | None:
        spec = problem.spec
        try:
            if self.set or self.change:
                before, after = self._rerun(problem)
            else:
                before, after = problem.before, problem.after or problem.before
        except ParamError:
            return None
        key = self.output or spec.output
        if spec.asks == "ratio" and not self.output and not self.before:
            b, a = before.value(key), after.value(key)
            if not isinstance(b, int | float) or not isinstance(a, int | float) or not b:
                return None
            return float(a) / float(b)
        result = before if self.before or spec.asks == "value" else after
        value = result.value(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        from_unit = spec.calc.outputs[spec.calc.output_keys.index(key)].unit
        to_unit = spec.answer_unit
        if from_unit != to_unit and not unit_problem(from_unit, to_unit) and to_unit != "×":
            return convert(float(value), from_unit, to_unit)
        return float(value)


def formula_names(spec: DrillSpec) -> set[str]:
    """The names a mistake's formula may read for this template: ``answer`` (the right answer, in
    its unit), each calculator input, ``out_KEY`` for each output and, with a change, ``after_NAME``
    and ``after_KEY`` after it (each in its own unit)."""
    calc = spec.calc
    names = {"answer"} | {param.name for param in calc.params} | {f"out_{key}" for key in calc.output_keys}
    if spec.change:
        names |= {f"after_{param.name}" for param in calc.params} | {
            f"after_{key}" for key in calc.output_keys
        }
    return names


def formula_numbers(problem: Problem) -> dict[str, float]:
    """The draw's numbers by the names ``formula_names`` gives (those with a number here)."""
    numbers: dict[str, float] = {"answer": problem.answer}
    results = [("", problem.before)] + ([("after_", problem.after)] if problem.after is not None else [])
    for prefix, result in results:
        for name, value in result.params.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                numbers[f"{prefix}{name}"] = float(value)
        for key, output in result.outputs.items():
            if isinstance(output.value, int | float) and not isinstance(output.value, bool):
                numbers[f"{prefix or 'out_'}{key}"] = float(output.value)
    return numbers


@dataclass(frozen=True)
class NamedMistake:
    """A mistake offered for one draw: its slug, what it says, its value in the answer's unit."""

    slug: str
    says: str
    value: float

    def as_json(self) -> dict[str, object]:
        return {"slug": self.slug, "says": self.says, "value": self.value}


def bands_apart(first: float, second: float, tolerance: float) -> bool:
    """No answer is within ``tolerance`` of both values."""
    low, high = sorted((first, second))
    return low * (1 + tolerance) < high * (1 - tolerance)


# A mistake this near the right answer (a share of the tolerance) is the right answer rounded:
# half the tolerance is what the page's printed answer may be off by (drill_problems.Problem.answer_number).
NEAR_SHARE = 0.5


def told_apart(value: float, answer: float, tolerance: float) -> bool:
    """A mistake's value stands far enough from the right answer to be named."""
    low, high = sorted((value, answer))
    return high > low * (1 + tolerance * NEAR_SHARE)


def offered_values(problem: Problem) -> list[tuple[Mistake, float]]:
    """The template's mistakes this draw can tell apart from the right answer and from each other,
    each with its value, in the order declared (an earlier one keeps a value two share)."""
    tolerance = problem.spec.tolerance
    kept: list[tuple[Mistake, float]] = []
    for mistake in problem.spec.mistakes:
        try:
            value = mistake.value_for(problem)
        except ParamError:
            value = None
        if value is None or not told_apart(value, problem.answer, tolerance):
            continue
        if all(bands_apart(value, other, tolerance) for _, other in kept):
            kept.append((mistake, value))
    return kept


def offered(problem: Problem) -> list[NamedMistake]:
    """``offered_values`` with each mistake's sentence in the draw's numbers."""
    return [
        NamedMistake(mistake.slug, problem.in_numbers(mistake.says), value)
        for mistake, value in problem.offered_values
    ]


def matched_value(values: list[float], answer: float, given: float, tolerance: float) -> int | None:
    """Which of a draw's mistake values an answer is, by index; None for none.

    An answer is a mistake when it is within the tolerance of the mistake's value and either not
    right or nearer the mistake than the right answer (a mistake inside the tolerance of the
    right answer: nearer it, the answer is the mistake, not the right one rounded)."""
    if given <= 0:
        return None
    right = abs(given / answer - 1) <= tolerance + 1e-12
    for index, value in enumerate(values):
        if abs(given / value - 1) > tolerance + 1e-12:
            continue
        if not right or abs(math.log(given / value)) < abs(math.log(given / answer)):
            return index
    return None


def matching(problem: Problem, given: float) -> NamedMistake | None:
    """The named mistake an answer is (``matched_value``), if any."""
    mistakes = problem.mistakes
    index = matched_value([m.value for m in mistakes], problem.answer, given, problem.spec.tolerance)
    return None if index is None else mistakes[index]


def mistake_problems(spec: DrillSpec) -> list[str]:
    """Why a template's mistakes cannot be computed, one sentence each."""
    calc = spec.calc
    declared = {param.name for param in calc.params}
    problems: list[str] = []
    slugs = [m.slug for m in spec.mistakes]
    if len(set(slugs)) != len(slugs):
        problems.append("two mistakes share a slug")
    for mistake in spec.mistakes:
        if mistake.input and mistake.input not in declared:
            problems.append(f"mistake {mistake.slug}: {calc.name} has no input {mistake.input!r}")
        for name in (mistake.output, mistake.divide):
            if name and name not in calc.output_keys:
                problems.append(f"mistake {mistake.slug}: {calc.name} has no output {name!r}")
        for name, value in {**mistake.set, **mistake.change}.items():
            if name not in declared:
                problems.append(f"mistake {mistake.slug}: {calc.name} has no input {name!r}")
            elif isinstance(value, str) and value.startswith("=") and value[1:] not in declared:
                problems.append(f"mistake {mistake.slug}: {value[1:]!r} is no input to copy")
        for name, factor in mistake.change.items():
            if name in declared and (
                calc.param(name).kind not in ("int", "float") or not isinstance(factor, int | float)
            ):
                problems.append(f"mistake {mistake.slug}: change {name}: a numeric input and a factor")
        named = {f"out.{key}" for key in calc.output_keys} | declared | spec.placeholder_names()
        if unknown := {m.group(1) for m in NUMBER_PLACEHOLDER.finditer(mistake.says)} - named:
            problems.append(f"mistake {mistake.slug}: {{{sorted(unknown)[0]}}} names no input or output")
        if mistake.before and not spec.change:
            problems.append(f"mistake {mistake.slug}: before needs the template's change")
    return problems

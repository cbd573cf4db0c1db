"""Practice problems made from the calculators: a template's draws, its problems and their checking.

A *drill* (a practice template) names a calculator, the output it asks for, how each input is
drawn (a list of values or presets, a range with a step, a log range) and the question text
with ``{placeholders}`` for the drawn values. A seed draws one problem (``random.Random(seed)``),
so an address with ``?seed=N`` always shows the same numbers. The answer is the calculator's own
value: at the drawn settings, after a change (``change``: each named input multiplied), or the
ratio of the two. docs/practice.md ("Practice problems") describes templates and their files.

Pure Python: no Django. Units are pint's; see :mod:`felab_sim.engine.problems.answers`.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..calculators import CALCULATORS
from ..core.calculator import Calculator, Result
from ..core.numbers import format_money, format_number, format_significant, parse_number, with_unit
from ..core.params import ParamError, ParamValue
from .answers import (
    AnswerError,
    Checked,
    ReadAnswer,
    check,
    convert,
    nearer_a_mistake,
    read_answer,
    unit_problem,
)
from .mistakes import (
    NUMBER_PLACEHOLDER,
    Mistake,
    MistakeError,
    NamedMistake,
    matched_value,
    matching,
    mistake_problems,
    offered,
    offered_values,
)
from .step_check import false_steps

__all__ = ["PLACEHOLDER", "Draw", "DrillSpec", "Problem", "draw_problem", "spec_problems"]

Asks = Literal["value", "after", "ratio"]
ASKS: dict[str, str] = {
    "value": "the output at the drawn settings",
    "after": "the output after the change",
    "ratio": "the output after the change ÷ before it",
}
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)\}")
# A log range draws this many significant digits, so a problem reads "3,400 tokens", not "3,417.6".
LOG_DIGITS = 2
# How many seeds, beyond every combination of extremes, a template is checked with when saved.
SAMPLE_SEEDS = 64
MAX_EXTREME_CASES = 256


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


@dataclass(frozen=True)
class Graded:
    """An answer's verdict and the named mistake it matches (None: none, or right)."""

    checked: Checked
    mistake: NamedMistake | None

    def as_json(self) -> dict[str, object]:
        """The shape ``manage.py drill SLUG --seed N --answer TEXT --json`` prints."""
        return {
            "verdict": self.checked.verdict,
            "says": self.checked.words,
            "mistake": None
            if self.mistake is None
            else {"slug": self.mistake.slug, "says": self.mistake.says},
        }


@dataclass(frozen=True)
class Problem:
    """One drawn problem: the question with its numbers, the calculator's results, the answer."""

    spec: DrillSpec
    seed: int
    inputs: dict[str, ParamValue]  # what the calculator is given (drawn and fixed)
    shown: dict[str, str]  # each placeholder as the question prints it
    before: Result
    after: Result | None
    answer: float

    @property
    def question(self) -> str:
        return fill(self.spec.question, self.shown)

    @property
    def unit(self) -> str:
        return self.spec.answer_unit

    @property
    def result(self) -> Result:
        """The result the answer is read from (the changed settings' when it asks after a change)."""
        return self.after if self.after is not None and self.spec.asks == "after" else self.before

    @property
    def share(self) -> bool:
        """The answer is a share or probability from 0 to 1 (a bare 45 may mean 45%)."""
        spec = self.spec
        output = spec.calc.outputs[spec.calc.output_keys.index(spec.output)]
        return output.share and spec.asks != "ratio" and not spec.unit

    def right_as_typed(self, typed: str) -> bool:
        """The typed text's first number, read in the answer's own unit, is graded as typed rather
        than questioned: it is right (a bare 0.44 where 0.44% is asked), or, where a share is
        asked, a named mistake's value (a bare 2.5, the margin without σ: a plain number has no
        other way to be typed; a percent mistake's 0.39% is typed with its sign)."""
        number = parse_number(typed)
        if number is None or number <= 0:
            return False
        right = abs(number / self.answer - 1) <= self.spec.tolerance + 1e-12
        return right or (self.share and self._mistake_at(number))

    @functools.cached_property
    def steps_before_the_answer(self) -> int:
        """How many worked steps come before the first that gives the answer away: one printing a
        number that, typed as printed (with the word after it as its unit, or in the answer's
        unit), is graded right. A hint may show those steps, never that one."""
        # What the question prints gives nothing away: a bare number it shows, or a number with
        # the same word after it. The same digits with another unit ("128" heads, then "128 GB")
        # are new, and checked.
        given = set(_typed_from(self.question))
        for index, step in enumerate(self.steps):
            if any(self._graded_right(typed) for typed in _typed_from(step) if typed not in given):
                return index
        return len(self.steps)

    def read_typed(self, typed: str) -> ReadAnswer:
        """The typed text read as this problem's answer (``answers.read_answer`` with its unit,
        share and as-typed reading); ``AnswerError`` when it cannot be counted."""
        return read_answer(typed, self.unit, above_zero=True, share=self.share,
                           right_as_typed=self.right_as_typed(typed))  # fmt: skip

    def _graded_right(self, typed: str) -> bool:
        try:
            read = self.read_typed(typed)
        except AnswerError:
            return False
        return self.grade(read.value).checked.verdict == "right"

    def _mistake_at(self, given: float) -> bool:
        values = [value for _, value in self.offered_values]
        return matched_value(values, self.answer, given, self.spec.tolerance) is not None

    @property
    def answer_number(self) -> str:
        """The answer as the page prints it, without its unit: the site's rule, with more digits
        where that rounding would fall outside half the tolerance or nearer a named mistake than
        the answer, so the printed answer retyped is graded right."""
        text = format_money(self.answer) if self.unit == "$" else format_number(self.answer)
        for digits in range(2, 13):
            printed = parse_number(text)
            if (
                "×" in text
                or printed is None
                or (
                    abs(printed / self.answer - 1) <= self.spec.tolerance / 2
                    and not self._mistake_at(printed)
                )
            ):
                break
            text = format_significant(self.answer, digits + 1)
        return text

    @property
    def answer_text(self) -> str:
        """The answer as the page prints it, with its unit."""
        return with_unit(self.answer_number, self.unit)

    def solution_values(self) -> dict[str, str]:
        """Every name a worked solution may use: inputs, ``out.KEY``, ``after.KEY``, ``answer``."""
        values = dict(self.shown)
        for name, value in self.before.params.items():
            values.setdefault(name, _shown(value, _money(self.spec, name)))
        for key, output in self.before.outputs.items():
            values[f"out.{key}"] = output.text()
        if self.after is not None:
            for name, value in self.after.params.items():
                values[f"after.{name}"] = _shown(value, _money(self.spec, name))
            for key, output in self.after.outputs.items():
                values[f"after.{key}"] = output.text()
        values["answer"] = self.answer_number
        return values

    def solution_numbers(self) -> dict[str, tuple[float, str]]:
        """The numbers behind the solution's names, each with its unit, for "{name:N}"."""
        numbers: dict[str, tuple[float, str]] = {}
        results = [("", self.before)] + ([("after.", self.after)] if self.after is not None else [])
        for prefix, result in results:
            for name, value in result.params.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    numbers[f"{prefix}{name}"] = (float(value), "")
            out = prefix if prefix else "out."
            for key, output in result.outputs.items():
                if isinstance(output.value, int | float) and not isinstance(output.value, bool):
                    numbers[f"{out}{key}"] = (float(output.value), output.unit)
        numbers["answer"] = (self.answer, self.unit)
        return numbers

    def in_numbers(self, text: str) -> str:
        """``text`` with each ``{name}`` or ``{name:digits}`` in this draw's numbers (a solution's
        step, a named mistake's sentence); a name the draw lacks is left as written."""
        if "{" not in text:
            return text
        values, numbers = self.solution_values(), self.solution_numbers()

        def replace(match: re.Match[str]) -> str:
            name, digits = match.group(1), match.group(2)
            if digits and name in numbers:
                value, unit = numbers[name]
                return with_unit(format_significant(value, int(digits)), unit)
            return values.get(name, match.group(0))

        return NUMBER_PLACEHOLDER.sub(replace, text)

    @property
    def steps(self) -> list[str]:
        """The worked solution, one step a line of the template's ``solution``, in this draw's numbers."""
        return [self.in_numbers(line).strip() for line in self.spec.solution.splitlines() if line.strip()]

    @property
    def solution(self) -> str:
        return " ".join(self.steps)

    def rerun(self, inputs: Mapping[str, ParamValue]) -> tuple[Result, Result]:
        """The calculator at other inputs, before and after the template's change (the same
        result twice without one): a named mistake's wrong way through the problem."""
        calc = self.spec.calc
        before = calc.run(inputs, with_formulas=False)
        if not self.spec.change:
            return before, before
        return before, calc.run(_changed(calc, before.params, self.spec.change), with_formulas=False)

    @functools.cached_property
    def offered_values(self) -> list[tuple[Mistake, float]]:
        """The template's mistakes this draw tells apart, each with its value (felab_sim.engine.problems.mistakes)."""
        return offered_values(self)

    @functools.cached_property
    def mistakes(self) -> list[NamedMistake]:
        """The named mistakes this draw tells apart, their sentences in the draw's numbers."""
        return offered(self)

    def grade(self, given: float) -> Graded:
        """An answer checked (right, close, off) and the named mistake it is, if any. An answer
        within the tolerance but nearer a named mistake than the right value is that mistake:
        close, not right (``answers.nearer_a_mistake``)."""
        checked = check(given, self.answer, self.spec.tolerance)
        mistake = matching(self, given)
        if mistake is not None and checked.verdict == "right":
            checked = nearer_a_mistake(checked, self.spec.tolerance)
        return Graded(checked, mistake)

    def as_json(self) -> dict[str, object]:
        """The shape ``manage.py drill SLUG --seed N --json`` prints."""
        return {
            "template": self.spec.slug,
            "seed": self.seed,
            "question": self.question,
            "inputs": dict(self.before.params),
            "answer": {"value": self.answer, "unit": self.unit},
            "tolerance": self.spec.tolerance,
            "steps": self.steps,
            "mistakes": [mistake.as_json() for mistake in self.mistakes],
        }


# A number as a worked step prints it ("$0.60", "1,024", "0.0021"), with the word after it, if any.
_STEP_NUMBER = re.compile(r"(?<![\w.])(\$?\d[\d,]*(?:\.\d+)?)(?:\s?(%|[A-Za-zµ][\w/µ]*))?")


def _typed_from(step: str) -> list[str]:
    """What a student could copy from a step: each number with the word after it, and alone."""
    typed = []
    for match in _STEP_NUMBER.finditer(step):
        number, word = match.group(1), match.group(2)
        typed += [f"{number} {word}", number] if word else [number]
    return typed


def fill(text: str, values: Mapping[str, str]) -> str:
    """The text with each ``{name}`` replaced; an unknown name stays as written (refused on save)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


@dataclass(frozen=True)
class DrawnQuestion:
    """A problem's question before it is solved: what a problem's page shows until it is answered."""

    seed: int
    question: str


def draw_question(spec: DrillSpec, seed: int) -> DrawnQuestion:
    """The question seed ``seed`` draws, its inputs put through the calculator's validation (its
    ground: ``DrillError`` as ``draw_problem`` raises) but not computed: a problem's page costs
    a draw, not a calculator run, until it is answered (``draw_problem`` then)."""
    inputs, shown = _draw_inputs(spec, seed)
    calc = spec.calc
    try:
        params = calc.validate(inputs)
        if spec.change:
            calc.validate(_changed(calc, params, spec.change))
    except ParamError as error:
        raise _refused(spec, seed, inputs, error) from None
    return DrawnQuestion(seed, fill(spec.question, shown))


def draw_problem(spec: DrillSpec, seed: int) -> Problem:
    """The problem seed ``seed`` draws; ``DrillError`` if the calculator refuses it."""
    inputs, shown = _draw_inputs(spec, seed)
    return _solve(spec, seed, inputs, shown)


def _draw_inputs(spec: DrillSpec, seed: int) -> tuple[dict[str, ParamValue], dict[str, str]]:
    """The calculator's inputs seed ``seed`` draws (with the fixed ones), and each as the question
    prints it."""
    rng = random.Random(seed)
    inputs: dict[str, ParamValue] = {}
    shown: dict[str, str] = {}
    for draw in spec.draws:
        picked, label = draw.pick(rng)
        inputs.update(picked)
        shown[draw.name] = (
            label if isinstance(label, str) and draw.presets else _shown(label, _money(spec, draw.name))
        )
        for name, value in picked.items():  # a preset's inputs can be named in the question too
            shown.setdefault(name, _shown(value, _money(spec, name)))
    inputs.update(spec.fixed)
    for name, value in spec.fixed.items():
        shown[name] = _shown(value, _money(spec, name))
    return inputs, shown


def _refused(spec: DrillSpec, seed: int, inputs: Mapping[str, ParamValue], error: ParamError) -> DrillError:
    drawn = ", ".join(f"{k}={_shown(v)}" for k, v in inputs.items())
    return DrillError("draws", f"seed {seed} draws {drawn}, which {spec.calc.name} refuses: {error}")


def _solve(spec: DrillSpec, seed: int, inputs: dict[str, ParamValue], shown: dict[str, str]) -> Problem:
    calc = spec.calc
    # No formulas: a problem shows its template's own worked solution and the outputs' values,
    # and writing every output's formula out cost about a quarter of a draw.
    try:
        before = calc.run(inputs, with_formulas=False)
        after = (
            calc.run(_changed(calc, before.params, spec.change), with_formulas=False) if spec.change else None
        )
    except ParamError as error:
        raise _refused(spec, seed, inputs, error) from None
    answer = _answer(spec, before, after)
    return Problem(spec, seed, inputs, shown, before, after, answer)


def _answer(spec: DrillSpec, before: Result, after: Result | None) -> float:
    value_before = before.value(spec.output)
    if spec.asks == "value":
        value: object = value_before
    else:
        assert after is not None
        value_after = after.value(spec.output)
        if spec.asks == "after":
            value = value_after
        elif isinstance(value_before, int | float) and isinstance(value_after, int | float) and value_before:
            value = value_after / value_before
        else:
            value = None
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise DrillError("output", f"{spec.output} has no finite value here ({value!r})")
    if value <= 0:
        raise DrillError("output", f"{spec.output} is {value!r} here; an answer must be above 0")
    output_unit = spec.calc.outputs[spec.calc.output_keys.index(spec.output)].unit
    if spec.unit and spec.asks != "ratio" and spec.unit != output_unit:
        return convert(float(value), output_unit, spec.unit)
    return float(value)


def _changed(calc: Calculator, params: Mapping[str, ParamValue], change: Mapping[str, float]) -> dict:
    changed = dict(params)
    for name, factor in change.items():
        value = changed[name]
        assert isinstance(value, int | float)
        scaled = value * factor
        changed[name] = round(scaled) if calc.param(name).kind == "int" else scaled
    return changed


def spec_problems(spec: DrillSpec, *, seeds: int = SAMPLE_SEEDS) -> list[DrillError]:
    """Why the template cannot be saved, field by field; empty when it can.

    Beyond its shape, every combination of its draws' extremes and ``seeds`` sampled seeds go
    through the calculator's own validation, and each must give a finite answer above 0.
    """
    shape = _shape_problems(spec)
    if shape:
        return shape
    cases: list[tuple[str, dict[str, ParamValue]]] = []
    combos = itertools.product(*(draw.extremes() for draw in spec.draws))
    for combo in itertools.islice(combos, MAX_EXTREME_CASES):
        inputs: dict[str, ParamValue] = {}
        for picked in combo:
            inputs.update(picked)
        cases.append(("the extremes", {**inputs, **spec.fixed}))
    for seed in range(seeds):
        problem_inputs: dict[str, ParamValue] = {}
        rng = random.Random(seed)
        for draw in spec.draws:
            problem_inputs.update(draw.pick(rng)[0])
        cases.append((f"seed {seed}", {**problem_inputs, **spec.fixed}))
    for where, inputs in cases:
        try:
            _solve(spec, 0, inputs, {})
        except DrillError as error:
            drawn = ", ".join(f"{k}={_shown(v)}" for k, v in inputs.items())
            message = error.message.split(", which ", 1)[-1] if error.field == "draws" else error.message
            return [DrillError(error.field, f"{where} ({drawn}): {message}")]
    # Every printed step must hold to the digits it prints (felab_sim.engine.problems.step_check).
    for seed in range(seeds):
        for step in draw_problem(spec, seed).steps:
            if problems := false_steps(step):
                return [DrillError("solution", f"seed {seed}: {problems[0]}")]
    return []


def _shape_problems(spec: DrillSpec) -> list[DrillError]:
    if spec.calculator not in CALCULATORS:
        return [
            DrillError("calculator", f"{spec.calculator!r} is not a calculator: {', '.join(CALCULATORS)}")
        ]
    calc = spec.calc
    problems: list[DrillError] = []
    if spec.output not in calc.output_keys:
        problems.append(
            DrillError("output", f"{calc.name} has no output {spec.output!r}: {', '.join(calc.output_keys)}")
        )
    if spec.asks not in ASKS:
        problems.append(DrillError("asks", f"asks must be one of {', '.join(ASKS)}"))
    if spec.asks != "value" and not spec.change:
        problems.append(
            DrillError("change", "asking after a change needs the change (an input and its factor)")
        )
    declared = {param.name for param in calc.params}
    names = [draw.name for draw in spec.draws]
    if not names:
        problems.append(DrillError("draws", "a practice template draws at least one input"))
    if len(set(names)) != len(names):
        problems.append(DrillError("draws", "two draws share a name"))
    set_by_draws = [name for draw in spec.draws for name in draw.inputs]
    for name in set_by_draws + list(spec.fixed):
        if name not in declared:
            problems.append(
                DrillError("draws" if name in set_by_draws else "fixed", f"{calc.name} has no input {name!r}")
            )
    for draw in spec.draws:
        if draw.presets and draw.name in declared:
            problems.append(
                DrillError("draws", f"presets {draw.name!r} share an input's name; name them apart")
            )
    if overlap := set(set_by_draws) & set(spec.fixed):
        problems.append(DrillError("fixed", f"{', '.join(sorted(overlap))} both drawn and fixed"))
    for name, factor in spec.change.items():
        numeric = name in declared and calc.param(name).kind in ("int", "float")
        if not numeric or not isinstance(factor, int | float) or isinstance(factor, bool) or factor <= 0:
            problems.append(DrillError("change", f"change {name}: a numeric input and a factor above 0"))
    problems += _placeholder_problems(spec)
    if not problems:
        problems += [DrillError("mistakes", message) for message in mistake_problems(spec)]
    output_unit = calc.outputs[calc.output_keys.index(spec.output)].unit if not problems else ""
    if not problems and spec.unit and (problem := unit_problem(spec.unit, output_unit)):
        problems.append(DrillError("unit", problem))
    return problems


def _placeholder_problems(spec: DrillSpec) -> list[DrillError]:
    problems = []
    in_question = set(PLACEHOLDER.findall(spec.question))
    allowed = spec.placeholder_names()
    if unknown := in_question - allowed:
        problems.append(DrillError("question", f"{{{sorted(unknown)[0]}}} is neither drawn nor fixed"))
    if missing := {d.name for d in spec.draws} - in_question:
        problems.append(
            DrillError("question", f"the question never shows the drawn {{{sorted(missing)[0]}}}")
        )
    declared = {param.name for param in spec.calc.params}
    keys = set(spec.calc.output_keys)
    solution_names = allowed | declared | {"answer"} | {f"out.{k}" for k in keys}
    if spec.change:
        solution_names |= {f"after.{k}" for k in keys | declared}
    if unknown := {m.group(1) for m in NUMBER_PLACEHOLDER.finditer(spec.solution)} - solution_names:
        problems.append(DrillError("solution", f"{{{sorted(unknown)[0]}}} names no input or output"))
    return problems


def _significant(value: float, digits: int = LOG_DIGITS) -> float:
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def _plain(value: float | None) -> float | int | None:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _money(spec: DrillSpec, name: str) -> bool:
    """The input is a price or a bill ("$/M tokens", "$/h"): its question and steps print cents."""
    return any(param.name == name and param.unit.startswith("$") for param in spec.calc.params)


def _shown(value: object, money: bool = False) -> str:
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

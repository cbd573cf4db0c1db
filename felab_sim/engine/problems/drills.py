"""Practice problems made from the calculators: a template's problems drawn from a seed, and the
checks a template must pass before it is saved.

A *drill* (a practice template) names a calculator, the output it asks for, how each input is
drawn (a list of values or presets, a range with a step, a log range) and the question text
with ``{placeholders}`` for the drawn values. A seed draws one problem (``random.Random(seed)``),
so an address with ``?seed=N`` always shows the same numbers. The answer is the calculator's own
value: at the drawn settings, after a change (``change``: each named input multiplied), or the
ratio of the two. docs/practice.md ("Practice problems") describes templates and their files.
A template's fields are felab_sim/engine/problems/drill_specs.py's; the drawn problem, its reading
and its grading, felab_sim/engine/problems/drill_problems.py's.

Pure Python: no Django. Units are pint's; see :mod:`felab_sim.engine.problems.answers`.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from ..calculators import CALCULATORS
from ..core.calculator import Result
from ..core.params import ParamError, ParamValue
from .answers import convert, unit_problem
from .drill_problems import Problem
from .drill_specs import ASKS, PLACEHOLDER, DrillError, DrillSpec, changed_inputs, fill, is_money, shown_value
from .mistakes import NUMBER_PLACEHOLDER, mistake_problems
from .step_check import false_steps

__all__ = ["DrawnQuestion", "draw_problem", "draw_question", "spec_problems"]

# How many seeds, beyond every combination of extremes, a template is checked with when saved.
SAMPLE_SEEDS = 64
MAX_EXTREME_CASES = 256
# A template's checks cost about 0.05–0.1 s of CPU and read nothing but the template
# and this code, so one process keeps each answer: an import run again, or an admin form saved
# after it was validated, gets it at once. Keyed by the template's every field (its repr).
_CHECKED: dict[tuple[str, int], tuple[DrillError, ...]] = {}
MAX_CHECKED = 512


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
            calc.validate(changed_inputs(calc, params, spec.change))
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
            label
            if isinstance(label, str) and draw.presets
            else shown_value(label, is_money(spec, draw.name))
        )
        for name, value in picked.items():  # a preset's inputs can be named in the question too
            shown.setdefault(name, shown_value(value, is_money(spec, name)))
    inputs.update(spec.fixed)
    for name, value in spec.fixed.items():
        shown[name] = shown_value(value, is_money(spec, name))
    return inputs, shown


def _refused(spec: DrillSpec, seed: int, inputs: Mapping[str, ParamValue], error: ParamError) -> DrillError:
    drawn = ", ".join(f"{k}={shown_value(v)}" for k, v in inputs.items())
    return DrillError("draws", f"seed {seed} draws {drawn}, which {spec.calc.name} refuses: {error}")


def _solve(spec: DrillSpec, seed: int, inputs: dict[str, ParamValue], shown: dict[str, str]) -> Problem:
    calc = spec.calc
    # No formulas: a problem shows its template's own worked solution and the outputs' values,
    # and writing every output's formula out cost about a quarter of a draw.
    try:
        before = calc.run(inputs, with_formulas=False)
        after = (
            calc.run(changed_inputs(calc, before.params, spec.change), with_formulas=False)
            if spec.change
            else None
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


def spec_problems(spec: DrillSpec, *, seeds: int = SAMPLE_SEEDS) -> list[DrillError]:
    """Why the template cannot be saved, field by field; empty when it can.

    Beyond its shape, every combination of its draws' extremes and ``seeds`` sampled seeds go
    through the calculator's own validation, and each must give a finite answer above 0.
    """
    key = (repr(spec), seeds)
    if key not in _CHECKED:
        if len(_CHECKED) >= MAX_CHECKED:
            _CHECKED.pop(next(iter(_CHECKED)))
        _CHECKED[key] = tuple(_checked(spec, seeds))
    return list(_CHECKED[key])


def _checked(spec: DrillSpec, seeds: int) -> list[DrillError]:
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
            drawn = ", ".join(f"{k}={shown_value(v)}" for k, v in inputs.items())
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

"""A drawn problem (``Problem``): its question in the draw's numbers, its worked solution, the
answer as the page prints it, and a typed answer read and graded against it (``Graded``), with the
named mistakes the draw tells apart. felab_sim/engine/problems/drills.py draws it.

Pure Python: no Django. Units are pint's; see :mod:`felab_sim.engine.problems.answers`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..core.calculator import Result
from ..core.numbers import format_money, format_number, format_significant, parse_number, with_unit
from ..core.params import ParamValue
from .answers import AnswerError, Checked, ReadAnswer, check, nearer_a_mistake, read_answer
from .drill_specs import DrillSpec, changed_inputs, fill, is_money, shown_value
from .mistakes import (
    NUMBER_PLACEHOLDER,
    Mistake,
    NamedMistake,
    matched_value,
    matching,
    offered,
    offered_values,
)

__all__ = ["Graded", "Problem"]


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
            values.setdefault(name, shown_value(value, is_money(self.spec, name)))
        for key, output in self.before.outputs.items():
            values[f"out.{key}"] = output.text()
        if self.after is not None:
            for name, value in self.after.params.items():
                values[f"after.{name}"] = shown_value(value, is_money(self.spec, name))
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
        return before, calc.run(changed_inputs(calc, before.params, self.spec.change), with_formulas=False)

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

"""Derived numbers in a card's prose, and whether each one is checked. Pure Python: no Django.

A card's text derives numbers from others: "275.1 ÷ 54.1 = 5.1", "about 5 times", "29% slower",
"131,072 bytes, 128 KiB". Each such number must be one of:

- live: written as a live number ({{sim.…}}, {{calc.…}}) or a fact from a table ({{hw.…}},
  {{model.…}}, {{price.…}}, {{measured.…}}), or a number the card's "Computed
  live" panel states, to the digits the text writes it with ("51" for a stated 51.1): that panel
  is checked against the simulator by tests/lessons/test_card_numbers_agree.py;
- inline: the arithmetic before its "=" is written out in numbers, and it adds up;
- checked: the card declares a check for it, an arithmetic expression over the numbers it is
  derived from, which evaluates to the number within its printed precision;
- quoted: the card declares where it comes from (a measured number, quoted from the course,
  is kept as measured and never recomputed).

A number that is none of these is unchecked: the admin warns the instructor (never refuses),
and a test holds the bundled cards to none. A check is written in the content files as

    checks:
    - number: 29%
      expr: (1 - 38.9 / 54.9) * 100
    - number: 12%
      source: the course's lesson 07 run, 12 of 100 prompts broke

with an optional relative ``tolerance`` for a number the card rounds as "about".
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_LIVE = r"\{\{\s*(?:sim|calc|hw|model|price|measured)\.[^}]*\}\}"
# A number as a card writes it, or a live number standing where a number would be.
_VALUE = rf"(?:{_LIVE}|{_NUMBER})"

# "= 5.1", "≈ 128", "= $0.15": the number after an equals sign.
_EQUALS = re.compile(rf"[=≈]\s*(?:about\s+|~\s*)?\$?(?P<number>{_VALUE})(?P<pct>\s*%)?")
# "5 times", "5×", "2.4x"; not "5 × 32", "0.95 × n" or "2 × layers": spaced on both sides, the
# × is a product still being written.
_TIMES = re.compile(rf"(?<![\w.,])(?P<number>{_VALUE})(?:\s+times\b|[×x](?![\w\d])(?!\s*(?:\d|\{{\{{|\()))")
# "29%", "29 percent".
_PERCENT = re.compile(rf"(?<![\w.,])(?P<number>{_VALUE})(?:\s*%|\s+percent\b)")
# A number of bytes in a unit; two in one sentence in different units are a conversion.
_BYTES = re.compile(rf"(?<![\w.,])(?P<number>{_VALUE})\s*(?P<unit>bytes|[KMGT]i?B)\b")
_SENTENCE_END = re.compile(r"[.!?;:](?:\s|$)|\n")
_CODE = re.compile(r"`[^`]*`")
# What may stand in the arithmetic before an equals sign for it to be evaluated as written.
_ARITHMETIC_TAIL = re.compile(rf"(?:\$?{_NUMBER}%?|[×x*÷/+\-−()]|\s)+$")
_CLAUSE_START = re.compile(r"[,;:.!?(]\s")
# "C = 16", "r = 0.5", "TP=2": a short name given a value, not a result.
_NAMED = re.compile(r"(?:^|[\s(])[^\W\d_][^\W_]{0,2}\s*$")
# "= 16 × 8,192 = 131,072": a number that starts more arithmetic is not the result yet.
_MORE_ARITHMETIC = re.compile(r"\s*[×x*÷/+\-−]\s*[\d({$]")


@dataclass(frozen=True)
class Derived:
    """A derived number found in a card's text."""

    field: str
    number: str  # as written, without unit: "5.1", "131,072", or a live number
    kind: str  # what makes it derived: "= N", "N times", "N%", "unit conversion"
    context: str  # the words around it, to find it in the text
    inline: str = ""  # the arithmetic written before its "=", when it is all numbers

    @property
    def live(self) -> bool:
        return self.number.startswith("{{")

    @property
    def percent(self) -> bool:
        return self.kind.endswith("%")

    @property
    def value(self) -> float | None:
        return None if self.live else float(self.number.replace(",", ""))


@dataclass(frozen=True)
class Finding:
    derived: Derived
    status: str  # "live", "inline", "checked", "quoted", "unchecked" or "wrong"
    detail: str = ""

    @property
    def covered(self) -> bool:
        return self.status in {"live", "inline", "checked", "quoted"}

    def message(self) -> str:
        where = (
            f"{self.derived.field}: {self.derived.number} ({self.derived.kind}) in “…{self.derived.context}…”"
        )
        return f"{where}: {self.detail}" if self.detail else where


class ExpressionError(ValueError):
    """An expression that is not plain arithmetic."""


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "ceil": math.ceil,
    "floor": math.floor,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "log2": math.log2,
    "log10": math.log10,
    "ln": math.log,
}
CHECK_KEYS = ("number", "expr", "source", "tolerance")


def in_written_order(entry: dict[str, Any]) -> dict[str, Any]:
    """A check's keys in the order the files and the admin write them. PostgreSQL's jsonb keeps
    a mapping's keys in an order of its own (shortest first), so it never decides this."""
    return {key: entry[key] for key in CHECK_KEYS if key in entry}


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def evaluate(expression: str) -> float:
    """An arithmetic expression's value: numbers, + − × ÷ / * ** ^ %, brackets and a few functions
    (ceil, floor, round, min, max, sqrt, log2, log10, ln). Nothing else is run: no names, no
    attributes, no eval. Raises ExpressionError for anything else."""
    text = expression.replace("×", "*").replace("÷", "/").replace("−", "-").replace("^", "**")
    text = _THOUSANDS.sub("", text).replace("$", "")
    text = re.sub(r"(?<=[\d)])\s*x\s*(?=[\d(])", "*", text)  # "18 x 1.42", as cards write it
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"not arithmetic: {expression!r}") from error
    try:
        return float(_value(tree.body))
    except (ArithmeticError, ValueError, TypeError) as error:
        raise ExpressionError(f"cannot be worked out: {expression!r} ({error})") from error


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in {int, float}:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _value(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 1e6):
            raise ExpressionError("a power this large is not a card's arithmetic")
        return _BINARY[type(node.op)](left, right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_value(arg) for arg in node.args))
    raise ExpressionError(
        f"only numbers, operators and {', '.join(_FUNCTIONS)} are allowed, not {ast.unparse(node)!r}"
    )


def decimals(number: str) -> int:
    _, dot, fraction = number.partition(".")
    return len(fraction) if dot else 0


def agrees(value: float, number: str, tolerance: float | None = None) -> bool:
    """Whether a worked-out value is the written number, to the digits it is written with
    (5.085 is "5.1"; 29.14 is "29"), or within a relative tolerance when one is given."""
    stated = float(number.replace(",", ""))
    if tolerance is not None:
        return abs(value - stated) <= tolerance * max(abs(stated), abs(value))
    return abs(value - stated) <= 0.5 * 10 ** -decimals(number) + 1e-9


def find_derived(field: str, text: str) -> list[Derived]:
    """Every derived number in one text, in order of where it is written."""
    prose = _CODE.sub(lambda match: " " * len(match[0]), text)  # code is a setting, not a claim
    found: dict[int, Derived] = {}
    for match in _EQUALS.finditer(prose):
        before = prose[: match.start()]
        clause = _CLAUSE_START.split(before)[-1]
        if not re.search(rf"\d|{_LIVE}|[×÷]", clause) or _NAMED.search(before):
            continue  # "C = 16", "k = 4": a name given a value, not a result
        if _MORE_ARITHMETIC.match(prose, match.end()):
            continue
        kind = "= N%" if match["pct"] else "= N"
        found[match.start("number")] = _derived(field, prose, match, kind, inline=_arithmetic(before))
    for pattern, kind in ((_TIMES, "N times"), (_PERCENT, "N%")):
        for match in pattern.finditer(prose):
            found.setdefault(match.start("number"), _derived(field, prose, match, kind))
    for start, end in _sentences(prose):
        units: set[str] = set()
        for match in _BYTES.finditer(prose, start, end):
            unit = "B" if match["unit"] == "bytes" else match["unit"]
            if units and unit not in units:
                found.setdefault(match.start("number"), _derived(field, prose, match, "unit conversion"))
            units.add(unit)
    return [found[start] for start in sorted(found)]


def _derived(field: str, prose: str, match: re.Match[str], kind: str, inline: str = "") -> Derived:
    start, end = match.start("number"), match.end("number")
    context = " ".join(prose[max(0, start - 40) : end + 20].split())
    return Derived(field, match["number"], kind, context, inline)


def _arithmetic(before: str) -> str:
    """The numbers-only arithmetic that ends just before an equals sign, or "" when there is none."""
    tail = _ARITHMETIC_TAIL.search(before)
    if tail is None:
        return ""
    text = tail[0].strip()
    if re.match(r"[×x*÷/+\-−]", text):
        return ""  # the arithmetic goes on through words ("200 tokens × $0.07"): not all numbers
    text = re.sub(r"^[)\s]+", "", text)
    opened: list[int] = []
    for index, char in enumerate(text):
        if char == "(":
            opened.append(index)
        elif char == ")" and opened:
            opened.pop()
    if opened:  # "the 54.1 (275.1 ÷ 54.1 = 5.1)": the sum starts after the bracket left open
        text = text[opened[-1] + 1 :].strip()
    if not re.match(r"[\d($]", text) or not re.search(r"\d\s*%?\)?\s*[×x*÷/+\-−]\s*\(?\$?\d", text):
        return ""
    try:
        evaluate(text.replace("%", ""))
    except ExpressionError:
        return ""
    return text


def _sentences(text: str) -> Iterable[tuple[int, int]]:
    start = 0
    for match in _SENTENCE_END.finditer(text):
        yield start, match.start()
        start = match.end()
    yield start, len(text)


@dataclass(frozen=True)
class Check:
    """A card's declaration for one derived number: how it is worked out, or where it is quoted from."""

    number: str
    expr: str = ""
    source: str = ""
    tolerance: float | None = None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Check:
        tolerance = entry.get("tolerance")
        return cls(
            number=str(entry.get("number", "")).strip(),
            expr=str(entry.get("expr") or "").strip(),
            source=str(entry.get("source") or "").strip(),
            tolerance=None if tolerance is None else float(tolerance),
        )

    @property
    def value(self) -> float | None:
        match = re.search(_NUMBER, self.number)
        return None if match is None else float(match[0].replace(",", ""))

    @property
    def percent(self) -> bool:
        return "%" in self.number

    @property
    def written(self) -> str:
        match = re.search(_NUMBER, self.number)
        return "" if match is None else match[0]

    def problem(self) -> str:
        """What is wrong with the check itself, or ""."""
        if self.value is None:
            return f"check {self.number!r}: 'number' must be a number as the card writes it"
        if not self.expr and not self.source:
            return (
                f"check {self.number}: give an 'expr' to work it out from, or the 'source' it is quoted from"
            )
        if self.expr:
            try:
                value = evaluate(self.expr)
            except ExpressionError as error:
                return f"check {self.number}: {error}"
            if not agrees(value, self.written, self.tolerance):
                return f"check {self.number}: {self.expr} is {value:.6g}, not {self.number}"
        return ""


def check_card(
    texts: Mapping[str, str], stated: Iterable[str], entries: Iterable[Mapping[str, Any]]
) -> tuple[list[Finding], list[str]]:
    """Each derived number in a card's texts with how it is covered, and the problems of the card's
    checks (a check that does not work out, or whose number its text no longer writes).

    ``stated``: the numbers the card's "Computed live" panel states.
    """
    checks = [Check.from_entry(entry) for entry in entries]
    check_problems = {check.number: check.problem() for check in checks}
    panel = [text for text in (re.search(_NUMBER, s) for s in stated) if text is not None]
    findings: list[Finding] = []
    for field, text in texts.items():
        for derived in find_derived(field, text):
            findings.append(_cover(derived, [m[0] for m in panel], checks, check_problems))
    problems = [problem for problem in check_problems.values() if problem]
    written = {(d.value, d.percent) for d in (f.derived for f in findings) if d.value is not None}
    for check in checks:
        if check.value is not None and (check.value, check.percent) not in written:
            problems.append(f"check {check.number}: the card's text writes no such derived number")
    return findings, problems


def _cover(derived: Derived, panel: list[str], checks: list[Check], problems: Mapping[str, str]) -> Finding:
    if derived.live:
        return Finding(derived, "live")
    value = derived.value
    assert value is not None
    for check in checks:
        # "6%" checks a percentage, never "6 times": the same digits, a different claim.
        if check.value == value and check.percent == derived.percent:
            if problems[check.number]:
                return Finding(derived, "wrong", problems[check.number])
            return Finding(derived, "checked" if check.expr else "quoted", check.expr or check.source)
    if derived.inline:
        worked = evaluate(derived.inline.replace("%", ""))
        if agrees(worked, derived.number):
            return Finding(derived, "inline", derived.inline)
        return Finding(derived, "wrong", f"{derived.inline} is {worked:.6g}")
    if any(agrees(float(number.replace(",", "")), derived.number) for number in panel):
        return Finding(derived, "live", "stated in the Computed live panel")
    return Finding(derived, "unchecked", "not a live number, and no check says how it is worked out")


def shape_problem(entries: Any) -> str:
    """Why a card's list of checks cannot be read at all, or "": a list of mappings, each with a
    number and an expr or a source. (Whether an expr works out is a warning, not this.)"""
    if not isinstance(entries, list):
        return 'a list of checks, e.g. [{"number": "29%", "expr": "(1 - 38.9 / 54.9) * 100"}]'
    for entry in entries:
        if not isinstance(entry, dict) or not str(entry.get("number", "")).strip():
            return f"each check is a mapping with a number, not {entry!r}"
        if not entry.get("expr") and not entry.get("source"):
            return (
                f"check {entry['number']}: give an expr to work it out from, or the source it is quoted from"
            )
        if unknown := set(entry) - set(CHECK_KEYS):
            return f"check {entry['number']}: unknown keys {', '.join(sorted(unknown))} (use {', '.join(CHECK_KEYS)})"
        tolerance = entry.get("tolerance")
        if tolerance is not None and (
            isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < 1
        ):
            return f"check {entry['number']}: tolerance is a fraction from 0 to 1 (0.05 is 5%), not {tolerance!r}"
    return ""

"""Whether a worked step's printed arithmetic holds to the digits it prints. Pure Python: no Django.

A step such as "80 GB ÷ 1.074 GB = 74.5, rounded down = 74" is read as equations: each "="
joins two sides, each side an expression in the printed numbers (words between them are
skipped). A side that is one printed number is a claim: the other side, computed from the
printed numbers exactly as shown, must round to it at its last printed digit. Two expressions
must agree within what their printed digits leave open. Prose around the arithmetic is left out:
the first side's arithmetic is the run that ends it ("a conversation holds 57,344 B × 8,192"),
the last side's the run that starts it ("12,807,018 tickets a month"); words in parentheses
("2 (K and V)", "2 B (f16)") and one letter right after a number ("730 h") are labels. A clause that starts with × or ÷ continues from the last
printed result ("= 327,680 B; × 32,768 tokens = 10.7 GB").

Units are read only where a step's own arithmetic leaves them to the reader: byte and FLOP
prefixes (GB is 10⁹ B, GiB 2³⁰, TFLOP/s 10¹² FLOP/s), ms against s, % as a hundredth, and a
number's glued "B" as billions ("3.6B"). Every other word, "tok/s", "h" or "tokens", is a label:
"44 min ÷ 60 × $2.5/h" is the student's arithmetic, minutes to hours by hand.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

__all__ = ["StepCheck", "check_step", "false_steps"]

_SUPERSCRIPTS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
_SCALES = {
    "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10, "MiB": 2.0**20,
    "GiB": 2.0**30, "GB/s": 1e9, "TB/s": 1e12, "TFLOP/s": 1e12, "GFLOP/s": 1e9,
    "ms": 1e-3, "s": 1.0, "%": 0.01,
}  # fmt: skip
_UNIT = "|".join(re.escape(u) for u in sorted(_SCALES, key=len, reverse=True))
_TOKEN = re.compile(
    r"(?P<number>\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?P<science> ?× ?10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
    r"(?P<power>[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
    r"(?P<glued>B\b|%|×)?"
    rf"(?: ?(?P<unit>(?:{_UNIT})(?![\w/])))?"
    r"(?P<per>/[A-Za-z]+)?"
    r"|(?P<op>[×÷+−\-*()^]|/(?![A-Za-z]))"
    r"|(?P<fn>σ|\bln\b|\blog\b)"
    r"|(?P<e>\be(?=\^))"
    r"|(?P<round>rounded (?:down|up))"
    r"|(?P<word>[^\s\d×÷+−\-*()^σ][^\s×÷+−\-*()^σ]*)"
    r"|\s+"
)
# A formula's letters: Greek, or one Latin letter on its own (k, r), or a name with a subscript.
_SYMBOL = re.compile(r"[α-ωΑ-Ω][\w⁰¹²³⁴⁵⁶⁷⁸⁹]*|[A-Za-z]|[a-z]\^\w+|…")
_CLAUSES = re.compile(r"; |: |\. (?=\S)|\.$")


@dataclass(frozen=True)
class _Number:
    value: float  # in the base unit
    half_digit: float  # half the last printed digit, in the base unit


@dataclass
class _Side:
    text: str
    tokens: list[tuple[str, object]]

    @property
    def plain(self) -> _Number | None:
        """The side's one printed number when that is all it holds (words aside)."""
        kinds = [kind for kind, _ in self.tokens]
        if kinds == ["num"] or kinds == ["num", "round"]:
            return self.tokens[0][1]  # type: ignore[return-value]
        return None


@dataclass(frozen=True)
class StepCheck:
    checked: int  # equations whose both sides are printed arithmetic
    problems: list[str]  # each one that does not hold, as a sentence


def false_steps(text: str) -> list[str]:
    """Each equation in ``text`` whose printed arithmetic does not hold, as a sentence; [] if all do."""
    return check_step(text).problems


def check_step(text: str) -> StepCheck:
    """The equations of one worked step read and checked (see the module's docstring)."""
    problems: list[str] = []
    checked = 0
    last: _Number | None = None
    for clause in _CLAUSES.split(text):
        sides = [_Side(part, _tokens(part)) for part in clause.split("=")]
        if len(sides) < 2:
            continue
        # Prose around the arithmetic ("a conversation holds 57,344 B × 8,192 = 0.47 GB, twice
        # what it did"): the first side's arithmetic is what ends it, the last side's what starts it.
        sides[0].tokens = _arithmetic_at(sides[0].tokens, end=True)
        sides[-1].tokens = _arithmetic_at(sides[-1].tokens, end=False)
        if last is not None and sides[0].tokens and sides[0].tokens[0] in (("op", "×"), ("op", "÷")):
            sides[0].tokens.insert(0, ("num", last))
        for left, right in itertools.pairwise(sides):
            if not _numeric(left) or not _numeric(right):
                continue
            checked += 1
            try:
                computed = _evaluate(left.tokens)
                claim = right.plain
                if claim is not None:
                    ok = abs(computed - claim.value) <= claim.half_digit * (1 + 1e-9) + 1e-12 * abs(
                        claim.value
                    )
                else:
                    # Two expressions: equal within what their printed digits leave open.
                    other = _evaluate(right.tokens)
                    slack = _slack(left.tokens) + _slack(right.tokens)
                    ok = abs(computed - other) <= slack + 1e-9 * max(abs(computed), abs(other))
            except (ValueError, ZeroDivisionError, OverflowError, IndexError) as error:
                problems.append(f"“{left.text.strip()} = {right.text.strip()}” cannot be read ({error})")
                continue
            if not ok:
                problems.append(
                    f"“{left.text.strip()} = {right.text.strip()}”: the left side is {computed:.6g}"
                )
        for side in reversed(sides):
            if side.plain is not None:
                last = side.plain
                break
    return StepCheck(checked, problems)


def _joins(first: tuple[str, object], second: tuple[str, object]) -> bool:
    """Two tokens can stand side by side in arithmetic: no number, letter or bracket follows a
    number, letter or closing bracket without an operator between ("8,192 tokens 57,344" is prose)."""
    ends = first[0] in ("num", "symbol") or first == ("op", ")")
    starts = second[0] in ("num", "symbol", "fn") or second == ("op", "(")
    return not (ends and starts)


def _arithmetic_at(tokens: list[tuple[str, object]], *, end: bool) -> list[tuple[str, object]]:
    """The longest run of arithmetic at the end (or the start) of a side's tokens, its brackets
    balanced: the prose before or after it left out."""
    ordered = [t for t in (reversed(tokens) if end else tokens) if t[0] != "round"]
    opening, closing = (("op", ")"), ("op", "(")) if end else (("op", "("), ("op", ")"))
    taken: list[tuple[str, object]] = []
    depth = 0
    for token in ordered:
        if token == closing and depth == 0:
            break
        if taken and not (_joins(token, taken[-1]) if end else _joins(taken[-1], token)):
            break
        depth += token == opening
        depth -= token == closing
        taken.append(token)
    if depth:  # a bracket left open: the run is not arithmetic on its own
        return tokens
    run = list(reversed(taken)) if end else taken
    return run + [t for t in tokens if t[0] == "round"]


def _numeric(side: _Side) -> bool:
    """A side of printed numbers only: "α = 0.46" or "r × (in + out)" states a formula, not arithmetic."""
    kinds = {kind for kind, _ in side.tokens}
    return "num" in kinds and "symbol" not in kinds


def _tokens(text: str) -> list[tuple[str, object]]:
    tokens: list[tuple[str, object]] = []
    after_number = False  # the last thing read was a number: one letter now is its unit
    for match in _TOKEN.finditer(text):
        if match.group().isspace():
            continue
        follows_number, after_number = after_number, bool(match.group("number"))
        if match.group("number"):
            tokens.append(("num", _number(match)))
        elif match.group("op"):
            op = {"−": "-", "*": "×", "/": "÷"}.get(match.group("op"), match.group("op"))
            tokens.append(("op", op))
        elif match.group("fn"):
            tokens.append(("fn", match.group("fn")))
        elif match.group("e"):
            tokens.append(("num", _Number(math.e, 0.0)))
        elif match.group("round"):
            tokens.append(("round", match.group("round").split()[1]))
        elif (word := match.group("word")) and _SYMBOL.fullmatch(word.strip(".,:;")):
            # One letter right after a number is its unit ("730 h × $4"), not a formula's letter.
            unit = follows_number and len(word.strip(".,:;")) == 1 and word.isascii()
            tokens.extend([] if unit else [("symbol", word)])
    # Words in parentheses ("2 (K and V) × 80", "2 B (f16)") say what a number is: the pair and
    # the letters in it are dropped, so the arithmetic around them is still checked.
    cleaned: list[tuple[str, object]] = []
    for token in tokens:
        if token == ("op", ")") and "(" in [value for kind, value in cleaned if kind == "op"]:
            opened = max(at for at, (kind, value) in enumerate(cleaned) if (kind, value) == ("op", "("))
            if all(kind == "symbol" for kind, _ in cleaned[opened + 1 :]):
                del cleaned[opened:]
                continue
        cleaned.append(token)
    return cleaned


def _number(match: re.Match[str]) -> _Number:
    printed = match.group("number").lstrip("$").replace(",", "")
    decimals = len(printed.partition(".")[2])
    value = float(printed)
    digit = 10.0**-decimals
    if science := match.group("science"):
        exponent = int(science.split("10", 1)[1].translate(_SUPERSCRIPTS))
        value, digit = value * 10.0**exponent, digit * 10.0**exponent
    if power := match.group("power"):
        value, digit = value ** int(power.translate(_SUPERSCRIPTS)), 0.0
    scale = 1.0
    if match.group("glued") == "B":
        scale = 1e9
    elif match.group("glued") == "%":
        scale = 0.01
    elif match.group("unit"):
        scale = _SCALES[match.group("unit")]
    return _Number(value * scale, digit / 2 * scale)


def _slack(tokens: list[tuple[str, object]]) -> float:
    """How far an expression can move as each printed number moves within its last digit."""
    base, total = _evaluate(tokens), 0.0
    for at, (kind, number) in enumerate(tokens):
        if kind == "num" and isinstance(number, _Number) and number.half_digit:
            moved = list(tokens)
            moved[at] = ("num", _Number(number.value + number.half_digit, 0.0))
            total += abs(_evaluate(moved) - base)
    return total


def _evaluate(tokens: list[tuple[str, object]]) -> float:
    parser = _Parser([t for t in tokens if t[0] == "num" or t[0] in ("op", "fn")])
    value = parser.expression()
    if parser.at < len(parser.tokens):
        raise ValueError(f"unexpected {parser.tokens[parser.at][1]!r}")
    for kind, how in tokens:
        if kind == "round":
            value = math.floor(value + 1e-9) if how == "down" else math.ceil(value - 1e-9)
    return value


class _Parser:
    """expression := term (('+'|'-') term)*; term := power (('×'|'÷') power)*;
    power := unary ('^' unary)?; unary := '-' unary | fn unary | atom; atom := number | '(' expression ')'."""

    def __init__(self, tokens: list[tuple[str, object]]) -> None:
        self.tokens, self.at = tokens, 0

    def peek(self) -> tuple[str, object] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, object]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expression(self) -> float:
        value = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            value = value + self.term() if self.take()[1] == "+" else value - self.term()
        return value

    def term(self) -> float:
        value = self.power()
        while self.peek() in (("op", "×"), ("op", "÷")):
            value = value * self.power() if self.take()[1] == "×" else value / self.power()
        return value

    def power(self) -> float:
        value = self.unary()
        if self.peek() == ("op", "^"):
            self.take()
            value = value ** self.unary()
        return value

    def unary(self) -> float:
        token = self.peek()
        if token == ("op", "-"):
            self.take()
            return -self.unary()
        if token is not None and token[0] == "fn":
            self.take()
            argument = self.unary()
            if token[1] == "σ":
                return 1 / (1 + math.exp(-argument))
            return math.log(argument)
        return self.atom()

    def atom(self) -> float:
        kind, value = self.take()
        if kind == "num":
            assert isinstance(value, _Number)
            return value.value
        if (kind, value) == ("op", "("):
            inner = self.expression()
            if self.take() != ("op", ")"):
                raise ValueError("a parenthesis is not closed")
            return inner
        raise ValueError(f"unexpected {value!r}")

"""A student's typed answer to a practice problem: read with its unit, compared, rated.

"24", "24 tok/s", "17.2 GB", "17,180 MB", "1.2e3", "$0.029", and every form the site prints a
number in (felab_sim.engine.core.numbers: "4.5 × 10⁻⁵", "1,234.5", "12%"; tests/sim/test_answers.py
round-trips them) or people write a power of ten in ("1.2x10^3", "1.2·10³"): the number and its unit are read
apart, the unit converted by pint (never matched as text), and the value compared with the
calculator's answer. A missing unit is read as the answer's and said so; a unit of another kind
(ms for a speed) or a text that is no number is an :class:`AnswerError`: explained, never
counted wrong. Pure Python: no Django.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Literal

import pint

from ..core.numbers import format_number, format_with_unit

Verdict = Literal["right", "close", "off"]
CLOSE_FACTOR = 2.0  # beyond 2x an off answer's distance reads as a factor ("2.3× too high")
CLOSE_TIMES = 3  # "close": within 3 times the tolerance (10% allowed: close to 30%), and within 2×
FAR_FACTOR = 10.0  # the instructor's groups: within 2x, 2-10x, over 10x
# Answered within this many seconds of the problem being shown counts as "quickly" (Easy).
QUICK_SECONDS = 90
MAX_ANSWER_CHARS = 80

# The course's count units, each its own kind, so "18 replicas" reads and "18 ms" is refused.
_COUNT_UNITS = (
    "token = [token] = tok",
    "replica = [replica]",
    "user = [user]",
    "conversation = [conversation]",
    "sequence = [sequence] = seq",
    "ticket = [ticket]",
    "task = [task]",
    "step = [step]",
    "example = [example]",
    "nat = [nat]",
    "FLOP = [flop] = flop",
    "dollar = [currency] = USD = usd",
    "cent = 0.01 dollar",
)
# Calculator output units as pint reads them ("" and "×" are plain numbers).
_CALC_UNITS = {"": "", "×": "", "x": "", "%": "percent", "$": "dollar", "tokens": "token",
               "tok/s": "token / second", "params": ""}  # fmt: skip
_UNIT_WORDS = {"×": "", "x": "", "times": "", "%": "percent", "tps": "token / second"}
# A number as typed, or as the site prints it (felab_sim.engine.core.numbers): "17,180", "17 180" (digit
# groups by a comma or a space, one kind throughout), "1.2e3", and a power of ten written
# "4.5 × 10⁻⁵" (the site's form), "1.2x10^3", "1.2·10³" or "1.2 * 10**3". Minus signs are ASCII
# by now (read_answer turns "−" into "-" first).
_TIMES = r"\s?[×xX*·⋅]\s?"
_NUMBER = re.compile(
    r"^(?P<sign>[-+]?)(?P<dollar>\$?)\s*"
    r"(?P<int>\d{1,3}(?P<sep>[, ])\d{3}(?:(?P=sep)\d{3})*(?!\d)|\d*)(?P<frac>\.\d+)?"
    r"(?:[eE](?P<exp>[-+]?\d+)"
    rf"|{_TIMES}10(?:\^|\*\*)\s?(?P<power>[-+]?\d+)"
    rf"|{_TIMES}10(?P<superscript>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
)
_FROM_SUPERSCRIPT = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")
# Every kind of space the site or a copied page may hold (no-break, thin, narrow no-break) reads as
# one plain space; a typographic minus as "-".
_SPACES = re.compile(r"\s+")


# A unit as people type one: up to six words ("GB", "tok", "µs", "%", "$", "tokens per second
# per user"), joined by "/", "*", "·" or a space, each raised at most to a power of 3 ("m^2",
# "s**-1", "m²"). pint evaluates any exponent it is handed, a power tower such as "9**9**9"
# included, before a check could refuse it; no answer here needs more than this, so nothing else
# reaches pint (a product past a float's range within it is refused where it is converted).
_UNIT_WORD = r"[A-Za-zµμΩ%$]+(?:(?:\^|\*\*)\s?-?[1-3]|[²³])?"
_UNIT_TEXT = re.compile(rf"{_UNIT_WORD}(?:\s?[/*·⋅ ]\s?{_UNIT_WORD}){{0,5}}")
# Answers whose value no problem comes near: a ratio to the expected answer past this would
# underflow to zero or overflow to infinity, which no verdict can print.
SMALLEST_ANSWER = 1e-100


class AnswerError(ValueError):
    """An answer that cannot be read or compared: the message says why and what to type."""


@functools.cache
def registry() -> pint.UnitRegistry:
    units = pint.UnitRegistry(cache_folder=None)
    for definition in _COUNT_UNITS:
        units.define(definition)
    return units


def pint_unit(calc_unit: str) -> pint.Unit:
    """A calculator's unit text ("tok/s", "GB", "%") as pint's unit."""
    text = _CALC_UNITS.get(calc_unit, calc_unit)
    return registry().parse_units(text) if text else registry().dimensionless


def unit_problem(unit: str, output_unit: str) -> str:
    """Why a template's answer unit cannot stand for its output's; empty when it can."""
    try:
        given, wanted = pint_unit(unit), pint_unit(output_unit)
    except (pint.errors.PintError, ValueError, AttributeError) as error:
        return f"{unit!r} is not a unit the site reads ({error})"
    if given.dimensionality != wanted.dimensionality:
        return f"{unit!r} does not convert to the output's {output_unit!r}"
    return ""


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """A value in one calculator unit, in another of the same kind."""
    return float(registry().Quantity(value, pint_unit(from_unit)).to(pint_unit(to_unit)).magnitude)


@dataclass(frozen=True)
class ReadAnswer:
    """The student's number in the answer's unit, and how it was read."""

    value: float
    typed: str
    note: str  # "no unit given: read as 17.2 GB" or "17,180 MB = 17.2 GB"


def read_answer(
    text: str, unit: str, *, above_zero: bool = False, share: bool = False, right_as_typed: bool = False
) -> ReadAnswer:
    """The typed answer as a number in ``unit``; ``AnswerError`` with what to type instead.

    With ``above_zero`` (every practice answer is: a template refuses draws whose answer is not),
    zero or below is refused as no value of the quantity. A bare number between 0 and 1 where
    a percent is asked is either a share or a small percent: refused with both readings, so the
    student says which instead of being marked 100× off. With ``share`` (the answer is a share or a
    probability from 0 to 1), a bare number from 1 to 100 is as likely a percent: refused the same way.
    ``right_as_typed`` (the caller found the bare number gradable as written:
    drill_problems.Problem.right_as_typed) spares both questions: a bare 0.44 is the 0.44% asked for, a
    bare 2.5 where a probability is asked is the named mistake of leaving out σ."""
    typed = _SPACES.sub(" ", text).strip()
    example = format_with_unit(24, unit) if unit not in {"×", "$"} else ("2.4×" if unit == "×" else "$0.03")
    if not typed:
        raise AnswerError(f"Type a number, for example {example}.")
    if len(typed) > MAX_ANSWER_CHARS:
        raise AnswerError(f"That is {len(typed)} characters; type just the number and its unit.")
    typed = typed.replace("−", "-")
    number, rest = _number_and_rest(typed, example)
    unit_text = _UNIT_WORDS.get(rest, rest)
    wanted = pint_unit(unit)
    if not unit_text:
        return _bare_answer(
            number,
            typed,
            rest,
            unit,
            wanted,
            above_zero=above_zero,
            share=share,
            right_as_typed=right_as_typed,
        )
    given = _given_unit(rest, unit_text, unit, wanted)
    try:
        value = float(registry().Quantity(number, given).to(wanted).magnitude)
    except (ArithmeticError, ValueError):  # a conversion past a float's range
        raise AnswerError(
            f"“{typed}” cannot be read as an answer: type the number and its unit, for example {example}."
        ) from None
    _refuse_impossible(value, typed, above_zero)
    note = "" if given == wanted else f"{typed} = {format_with_unit(value, unit)}"
    if _size_power(given) and _BITS.search(unit_text) and not _BITS.search(unit):
        note += ": b is bits, 8 to a byte (B)"
    return ReadAnswer(value, typed, note)


def _number_and_rest(typed: str, example: str) -> tuple[float, str]:
    """The number an answer opens with, and the text after it (its unit; a "$" before the number
    or after it read as "dollar")."""
    match = _NUMBER.match(typed)
    digits = (match.group("int") or "") + (match.group("frac") or "") if match else ""
    if not match or not any(ch.isdigit() for ch in digits):
        raise AnswerError(f"“{typed}” is not a number: type digits, for example {example}.")
    number = _number(match)
    if not math.isfinite(number):
        raise AnswerError(f"“{typed}” is too large to be an answer; check the digits.")
    rest = typed[match.end() :].strip()
    if re.match(r"[,.]\d", rest):
        raise AnswerError(
            f"“{typed}”: write a decimal with a point (1.2); commas only separate thousands (17,180)."
        )
    if match.group("dollar") or rest.startswith("$"):
        rest = ("dollar " + rest.removeprefix("$")).strip()
    return number, rest


def _bare_answer(
    number: float,
    typed: str,
    rest: str,
    unit: str,
    wanted: pint.Unit,
    *,
    above_zero: bool,
    share: bool,
    right_as_typed: bool,
) -> ReadAnswer:
    """An answer given without a unit (or with one that is no unit, "×"), read in ``unit``; a bare
    share where a percent is asked, or a bare percent where a share is, refused with both readings
    (read_answer says when)."""
    if unit == "%" and rest == "" and 0 < number < 1 and not right_as_typed:
        raise AnswerError(
            f"“{typed}”: the answer is a percent. Did you mean {format_with_unit(number * 100, '%')}"
            f" (a share of {typed}) or {typed}%? Type it with the % sign."
        )
    if share and unit == "" and rest == "" and 1 < number <= 100 and not right_as_typed:
        raise AnswerError(
            f"“{typed}”: the answer is a share from 0 to 1. Did you mean {format_number(number / 100)}"
            f" ({typed}%)? Type the share, or the percent with the % sign."
        )
    if wanted != registry().dimensionless and rest == "":
        note = f"no unit given: read as {format_with_unit(number, unit)}"
    else:
        note = ""
    _refuse_impossible(number, typed, above_zero)
    return ReadAnswer(number, typed, note)


def _given_unit(rest: str, unit_text: str, unit: str, wanted: pint.Unit) -> pint.Unit:
    """The unit an answer was given in, as pint reads it; ``AnswerError`` for text that is no unit
    the site knows, or a unit of another kind than ``wanted`` (a size for a count, ms for a speed)."""
    unknown = f"“{rest}” is not a unit the site knows; give the answer in {unit or 'a plain number'}."
    if not _UNIT_TEXT.fullmatch(unit_text):
        raise AnswerError(unknown)
    try:
        given = registry().parse_units(_pint_words(unit_text))
        # pint counts bits and bytes as no dimension at all, so "5 GB" would convert to a plain
        # number or a percent: a size only stands for a size.
        same_kind = given.dimensionality == wanted.dimensionality and _size_power(given) == _size_power(
            wanted
        )
    except Exception:  # pint's parser raises what it meets (even AssertionError on "× GB")
        raise AnswerError(unknown) from None
    if not same_kind and _size_power(wanted) == 0 and given.dimensionality == wanted.dimensionality:
        raise AnswerError(
            f"“{rest}” is a size in bytes or bits, and this answer is not one: give it in"
            f" {unit or 'a plain number'}."
        )
    if not same_kind:
        raise AnswerError(
            f"“{rest}” is not the kind of unit this answer is in: give it in {unit or 'a plain number'}"
            f" (or a unit that converts to it)."
        )
    return given


# No quantity a problem asks for comes near this; past it a ratio to the expected answer can
# overflow to infinity, which no verdict can print.
LARGEST_ANSWER = 1e100


def _refuse_impossible(value: float, typed: str, above_zero: bool) -> None:
    if not math.isfinite(value) or abs(value) > LARGEST_ANSWER:
        raise AnswerError(
            f"“{typed}” is too large to be the answer to any problem here. Type the value you worked out."
        )
    if above_zero and value <= 0:
        raise AnswerError(
            f"“{typed}” cannot be the answer: the quantity asked for is above zero. Type the value you worked out."
        )
    if value != 0 and abs(value) < SMALLEST_ANSWER:
        raise AnswerError(
            f"“{typed}” is too small to be the answer to any problem here. Type the value you worked out."
        )


def _number(match: re.Match[str]) -> float:
    """The value _NUMBER read: its digits without separators, times its power of ten."""
    exponent = match.group("exp") or match.group("power") or ""
    if superscript := match.group("superscript"):
        exponent = superscript.translate(_FROM_SUPERSCRIPT)
    digits = (match.group("int") or "0").replace(",", "").replace(" ", "") + (match.group("frac") or "")
    try:
        return float(f"{match.group('sign')}{digits}{'e' + exponent if exponent else ''}")
    except OverflowError:  # float() gives inf for a large exponent; this guards the rest
        return math.inf


def _size_power(unit: pint.Unit) -> float:
    """The power of bits in ``unit`` (GB 1, GB/s 1, % 0): pint's dimensions leave sizes out."""
    _, root = registry().get_root_units(unit)
    return dict(registry().Quantity(1, root).unit_items()).get("bit", 0)


# A lower-case b after a size prefix is a bit, as people write data sizes ("10.7 Gb", "Mb/s");
# pint would read it as a barn (an area) or "Gb" as a gilbert.
_BITS = re.compile(r"\b([kKMGTPE]i?)?b\b")


def _pint_words(text: str) -> str:
    """What students write that pint spells otherwise: "tok/s", "tokens/sec", "GB/s", "Gb"."""
    text = text.replace("sec", "s") if re.search(r"\bsec\b", text) else text
    text = _BITS.sub(lambda m: (m.group(1) or "").replace("K", "k") + "bit", text)
    return text.replace("%", "percent")


@dataclass(frozen=True)
class Checked:
    """How far an answer is from the calculator's."""

    verdict: Verdict
    ratio: float  # given ÷ expected; 0 for an answer of 0 or below
    words: str  # "right: 3% high", "2.3× too high"

    @property
    def error_ratio(self) -> float:
        """How many times off, never below 1 (1.0 exact); infinite for an answer of 0 or below."""
        if self.ratio <= 0:
            return math.inf
        return max(self.ratio, 1 / self.ratio)

    @property
    def group(self) -> str:
        """The instructor's group: right, within 2×, 2-10× or over 10× off, high or low."""
        return ratio_group(self.ratio, self.verdict)


def check(given: float, expected: float, tolerance: float) -> Checked:
    """Right within the tolerance, close within CLOSE_TIMES the tolerance (and 2×), off beyond it.

    The words are the verdict's own numbers: a right answer's distance is printed no larger than
    the tolerance, a close one's larger than it and no larger than the close band, an off one's
    beyond the band (as a percent within 2×, as a factor beyond), with as many decimals as that
    takes, so a verdict never reads "Close: 1× too high", "Close: 100% too high" beside a 10%
    tolerance, or "Right" beside the same distance called "Close" on another answer."""
    if expected <= 0 or not math.isfinite(expected):
        raise ValueError(f"expected answer must be above 0, got {expected!r}")
    if given <= 0:
        return Checked("off", 0.0, "zero or below: the answer is above zero")
    ratio = given / expected
    allowed = tolerance_text(tolerance)
    off_by = abs(ratio - 1) * 100  # percent
    side = "high" if ratio > 1 else "low"
    if off_by <= tolerance * 100 + 1e-10:
        shown = _printed_within(off_by, tolerance * 100)
        if float(shown) == 0:
            return Checked("right", ratio, f"on the calculator's value (right within {allowed})")
        return Checked("right", ratio, f"{shown}% {side}, within the {allowed} allowed")
    within_two = 1 / CLOSE_FACTOR <= ratio <= CLOSE_FACTOR
    band = close_band(tolerance) * 100
    if within_two and off_by <= band + 1e-10:
        shown = _printed_within(off_by, band)
        if float(shown) <= tolerance * 100:
            shown = _printed_beyond(off_by, tolerance * 100)
        return Checked("close", ratio, f"{shown}% too {side}; right is within {allowed}")
    # An answer so far below the expected one that the ratio underflows to zero is off by more
    # than any factor, not a division by zero.
    factor = ratio if ratio > 1 else (1 / ratio if ratio > 0 else math.inf)
    if not math.isfinite(factor):  # beyond any float: no factor to print
        return Checked("off", ratio, f"too {side} by more than any factor this site prints")
    if factor <= CLOSE_FACTOR:
        shown = _printed_beyond(off_by, band)
        return Checked("off", ratio, f"{shown}% too {side}; right is within {allowed}")
    return Checked("off", ratio, f"{_printed_beyond(factor, CLOSE_FACTOR)}× too {side}")


def nearer_a_mistake(checked: Checked, tolerance: float) -> Checked:
    """A right answer that is nearer a named mistake than the calculator's value: close, not right.

    It lies within the tolerance, but the mistake explains it better than rounding does (bytes
    ÷ 2³⁰ where ÷ 10⁹ is asked is 6.9% low, the tolerance 10%), so it is not counted right and the page names the
    mistake; close, not off, because its number is near."""
    off_by = abs(checked.ratio - 1) * 100
    side = "high" if checked.ratio > 1 else "low"
    shown = _printed_within(off_by, tolerance * 100)
    return Checked(
        "close",
        checked.ratio,
        f"{shown}% {side}, nearer a common mistake than the calculator's value, so not counted right",
    )


def close_band(tolerance: float) -> float:
    """How far (a share) an answer may be and still be close: CLOSE_TIMES the tolerance."""
    return CLOSE_TIMES * tolerance


def tolerance_text(tolerance: float) -> str:
    """The tolerance as a student reads it: "10%", "1%", "2.5%"."""
    return f"{format_number(round(tolerance * 100, 6))}%"


def _printed_within(value: float, bound: float) -> str:
    """``value`` (at most ``bound``) printed with the fewest decimals (0 to 4) that keep it so."""
    for decimals in range(5):
        text = f"{value:.{decimals}f}"
        if float(text) <= bound:
            return text
    return f"{bound:g}"


def _printed_beyond(value: float, bound: float) -> str:
    """``value`` (above ``bound``) printed by the site's rule, or with more decimals where the
    rule would print the bound itself or below it: 10.02% beside a 10% tolerance, not "10%"."""
    text = format_number(value)
    if float(text.replace(",", "")) > bound:
        return text
    for decimals in range(1, 7):
        text = f"{value:,.{decimals}f}"
        if float(text.replace(",", "")) > bound:
            return text
    return f"{value:.7g}"


def ratio_group(ratio: float, verdict: Verdict) -> str:
    if verdict == "right":
        return "right"
    if ratio <= 0:
        return "zero or below"
    side = "high" if ratio > 1 else "low"
    far = max(ratio, 1 / ratio)
    if far <= CLOSE_FACTOR:
        return f"within 2× {side}"
    if far <= FAR_FACTOR:
        return f"2–10× {side}"
    return f"over 10× {side}"


# FSRS's ratings, by the values quiz stores (Again 1, Hard 2, Good 3, Easy 4).
AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4


def proposed_rating(verdict: Verdict, previous_right: bool, seconds: float | None) -> int:
    """The rating the site proposes: right → Good, right twice in a row quickly → Easy,
    close → Hard, off → Again. "Quickly": within QUICK_SECONDS of the problem being shown."""
    if verdict == "off":
        return AGAIN
    if verdict == "close":
        return HARD
    quick = seconds is not None and 0 <= seconds <= QUICK_SECONDS
    return EASY if previous_right and quick else GOOD

"""The site's one rule for printing a number. Pure Python: no Django import.

Every number a student reads (card text, the "Computed live" panel, /sim/'s table and
summary, progress counts) goes through :func:`format_number` or :func:`format_with_unit`,
so the same value never appears as "26.0" on one page and "26" on another.

The rule:

- Precision follows size, so a number keeps three or four significant digits and never
  shows noise: 1,000 and above, no decimals ("3,357", "25,856"); from 1 to 1,000, one
  decimal ("275.1", "41.4", "5.1"); below 1, two significant digits ("0.53", "0.042").
- A decimal part of zeros is dropped: "500", "26", "18", "2.5" (not "500.0" or "2.50").
- Thousands are separated by commas at any size: "1,234,567".
- Integers (``int``) print whole, with separators: "25,856".
- Below 0.0001 (and not 0) once rounded to two significant digits, scientific: "8.8 × 10⁻²⁷",
  never a row of zeros a reader has to count; 0.0000999 rounds to 0.0001 and prints so.
- A value that cannot be computed (None, NaN, infinity) prints as an em dash, never an error.
- Money prints to the cent from ten cents up ("$0.60", "$68.25", "$1,825.00"), below that
  by the rule above ("$0.029", "$0.00046"): :func:`format_money`.
- Units follow the number after a space ("26 ms", "275.1 tok/s"), except the ones that
  read as part of the number: "%", "×" and "x" ("71%", "5.1×").

:func:`parse_number` reads back what a person wrote ("3,357", "5.1×", "about 26 ms"), so
tests can compare a card's stated numbers with computed ones.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal

MISSING = "—"
# Below this size a number is written "8.8 × 10⁻²⁷".
SCIENTIFIC_BELOW = 1e-4
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
# Units written against the number, not after a space.
_ATTACHED_UNITS = frozenset({"%", "×", "x"})
_NUMBER = re.compile(r"[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?: ?× ?10⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")


def decimals_for(value: float) -> int:
    """How many decimals the rule prints for a value of this size (before dropping zeros)."""
    size = abs(value)
    if size >= 1000:
        return 0
    if size >= 1 or size == 0:
        return 1
    # Below 1: two significant digits, e.g. 0.53 -> 2 decimals, 0.042 -> 3.
    return 1 - math.floor(math.log10(size))


def format_number(value: float | int | None) -> str:
    """A number as the site prints it, without a unit; see the module's docstring for the rule."""
    if value is None or isinstance(value, bool):
        return MISSING
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return MISSING
    if value != 0 and abs(value) < SCIENTIFIC_BELOW:
        # Decided on the value as rounded to its two digits (rounding never takes one at or above
        # the bound below it): 9.99e-5 is printed as 0.0001 is, where deciding on the value
        # itself wrote it "1 × 10⁻⁴" beside 0.0001's "0.0001".
        scientific = f"{value:.1e}"
        if abs(float(scientific)) < SCIENTIFIC_BELOW:
            mantissa, exponent = scientific.split("e")
            mantissa = mantissa.removesuffix(".0")
            return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    text = f"{value:,.{decimals_for(value)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in {"-0", "−0"}:
        text = "0"
    return text


def format_with_unit(value: float | int | None, unit: str = "") -> str:
    """A number with its unit: "26 ms", "275.1 tok/s", "71%", "$0.13"; just the dash when it is missing."""
    return with_unit(format_money(value) if unit == "$" else format_number(value), unit)


# From ten cents up, money prints to the cent; below, cents would print most amounts as 0.00.
# From a trillion dollars up no figure is known to the cent: those print by the site's rule.
CENTS_FROM, CENTS_UP_TO = 0.1, 1e12


def format_money(value: float | int | None) -> str:
    """Dollars without their sign: to the cent from ten cents up ("0.60", "68.25", "1,825.00",
    half a cent rounding up), below that by the site's rule and never with fewer decimals than
    cents ("0.095", "0.029", "0.00046", "4.5 × 10⁻⁵"; 0.0999 is "0.10", not "0.1"); from a
    trillion up by the site's rule too ("1.0 × 10³⁰⁸")."""
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return MISSING
    if 0 < abs(value) < CENTS_FROM or abs(value) >= CENTS_UP_TO:
        text = format_number(value)
        whole, dot, fraction = text.partition(".")
        return f"{whole}.{fraction:0<2}" if dot and len(fraction) < 2 else text
    cents = Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{cents:,.2f}"


def with_unit(number: str, unit: str) -> str:
    """A printed number with its unit: after a space, against it ("71%") or leading it ("$0.13")."""
    if not unit or number == MISSING:
        return number
    if unit == "$":
        return f"-${number[1:]}" if number.startswith("-") else f"${number}"
    return f"{number}{unit}" if unit in _ATTACHED_UNITS else f"{number} {unit}"


def format_significant(value: float | int, digits: int) -> str:
    """A number with at least ``digits`` significant digits (whole numbers print whole), for a
    worked step whose next step computes from it: "1.074" where the rule prints "1.1"."""
    if isinstance(value, bool) or not math.isfinite(value):
        return MISSING
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def parse_number(text: str) -> float | None:
    """The first number written in a text ("3,357 ms" -> 3357.0), or None when there is none."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    return _read(match[0])


def numbers_in(text: str) -> list[float]:
    """Every number written in a text, in order."""
    return [_read(found) for found in _NUMBER.findall(text)]


def _read(found: str) -> float:
    mantissa, _, power = found.replace(",", "").replace("−", "-").partition("×")
    if not power:
        return float(mantissa)
    exponent = int(power.strip().removeprefix("10").translate(_FROM_SUPERSCRIPT))
    return float(f"{mantissa.strip()}e{exponent}")


def agrees(stated: float, computed: float, tolerance: float = 0.02) -> bool:
    """Whether a stated number matches a computed one within a relative tolerance.

    A stated number is also accepted when it is the computed one printed by the rule
    (a rounded number is not a disagreement, e.g. 0.53 for 0.5349).
    """
    if format_number(computed) == format_number(stated):
        return True
    scale = max(abs(stated), abs(computed))
    return scale == 0 or abs(stated - computed) <= tolerance * scale


def decimals_written(text: str) -> int | None:
    """How many decimals the first number in a text is written with ("0.585" -> 3, "3,344" -> 0),
    or None when the text holds no number."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    _, dot, fraction = match[0].partition(".")
    return len(fraction) if dot else 0


def format_like(value: float | int | None, stated: str) -> str:
    """A computed number printed with as many decimals as the number a card states for it, so that
    equal numbers look equal beside each other: 0.5849 beside "0.585" prints "0.585", 2.4 beside
    "2.40" prints "2.40", 70.7 beside "71" prints "71". Without a stated number: the site's rule."""
    decimals = decimals_written(stated)
    if decimals is None or value is None or isinstance(value, bool):
        return format_number(value)
    if not math.isfinite(value):
        return MISSING
    text = f"{value:,.{decimals}f}"
    return text.removeprefix("-") if float(text.replace(",", "")) == 0 else text

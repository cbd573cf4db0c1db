"""A stand-in for the site's number formatting until ``felab_sim/core/numbers.py`` is merged.

The ``students`` branch writes the one rule (felab_sim/core/numbers.py, same two functions);
when it is merged, the imports of this module switch to it and this file goes. Same rule:
no decimals from 1,000 up, one decimal from 1 to 1,000, two significant digits below 1,
trailing zeros dropped, thousands separated by commas.
"""

from __future__ import annotations

import math

MISSING = "—"
_ATTACHED_UNITS = frozenset({"%", "×", "x"})


def format_number(value: float | int | None) -> str:
    if value is None or isinstance(value, bool):
        return MISSING
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return MISSING
    size = abs(value)
    decimals = 0 if size >= 1000 else 1 if size >= 1 or size == 0 else 1 - math.floor(math.log10(size))
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def format_figure(value: float | int | None, unit: str = "") -> str:
    number = format_number(value)
    if not unit or number == MISSING:
        return number
    return f"{number}{unit}" if unit in _ATTACHED_UNITS else f"{number} {unit}"

"""Parameter declarations: each parameter is written once, and everything else reads it.

A :class:`Param` says what a knob is called, its type, unit, range, default and one line of
help. The calculators' pages, their forms, the ``calc`` command's flags, the JSON endpoint's
validation and the admin's parameter sets are all generated from these declarations; see
docs/architecture.md ("Parameters: declared once").

Pure Python (no Django): a value arrives either as text (a query string, a form, a CLI flag)
or as a JSON value, and :meth:`Param.parse` turns both into one checked Python value, or
raises :class:`ParamError` naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Param", "ParamError", "ParamValue", "heading", "parse_all"]

ParamValue = int | float | str | bool | None
# "text" is for a value with its own grammar, checked by its owner (the sweep's "1,8,16" levels).
Kind = Literal["int", "float", "choice", "bool", "text"]

# Longest text accepted for one value: a number never needs more, and a long string is an attack.
MAX_TEXT = 200
_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}


class ParamError(ValueError):
    """An invalid parameter; ``param`` is its name, the message names it and what it accepts."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param
        self.message = message


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


def _shown_number(value: int | float) -> str:
    """A number a person sent, as they would write it: 1,000,000,000 rather than 1000000000.0."""
    try:
        if float(value).is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return repr(float(value))  # every digit of 0.1234567, and 1e+300 rather than 301 digits
    except OverflowError:
        return f"a {len(str(abs(int(value))))}-digit number"


def heading(label: str) -> str:
    """A label at the start of a sentence or a row: its first letter capitalised if it is a
    Latin one, so a symbol keeps its case ("β × margin", not "Β × margin", a capital beta)."""
    return label[:1].upper() + label[1:] if label[:1].isascii() else label


@dataclass(frozen=True)
class Param:
    """One knob of a calculator.

    ``default=None`` with ``optional=True`` means "not given": the calculator derives the value
    (e.g. ``active_params_b`` defaults to ``params_b``). ``choices`` maps each allowed value of a
    ``choice`` parameter to its label.
    """

    name: str
    kind: Kind
    default: ParamValue
    help: str
    unit: str = ""
    label: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: Mapping[str, str] = field(default_factory=dict)
    optional: bool = False
    # A "text" value longer than a number ever is (a pasted config.json): the page gives it a
    # text area, and the command line's flag takes a file holding it.
    max_chars: int = MAX_TEXT

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " "))
        if self.kind == "choice" and not self.choices:
            raise TypeError(f"{self.name}: a choice parameter needs choices")
        if self.default is None and not self.optional:
            raise TypeError(f"{self.name}: only an optional parameter may default to None")
        if self.default is not None:
            self.parse(self.default)  # a declaration whose default it refuses is a bug

    @property
    def is_long_text(self) -> bool:
        """Whether the value is a document (a config.json) rather than one short value."""
        return self.kind == "text" and self.max_chars > MAX_TEXT

    @property
    def flag(self) -> str:
        """The command-line flag: dashes for underscores."""
        return "--" + self.name.replace("_", "-")

    def rule(self) -> str:
        """What the parameter accepts, in words (used in every error message)."""
        if self.kind == "choice":
            return f"{self.name} must be one of {', '.join(self.choices)}"
        if self.kind == "bool":
            return f"{self.name} must be on or off"
        if self.kind == "text":
            return f"{self.name} must be text: {self.help[:1].lower()}{self.help[1:]}"
        kind = "an integer" if self.kind == "int" else "a number"
        parts = []
        if self.low is not None:
            parts.append(f"greater than {_num(self.low)}" if self.low_open else f"at least {_num(self.low)}")
        if self.high is not None:
            parts.append(f"at most {_num(self.high)}")
        return f"{self.name} must be {kind}" + (" " + " and ".join(parts) if parts else "")

    def parse(self, raw: object) -> ParamValue:
        """A checked value from text or a JSON value; ``ParamError`` naming this parameter if not."""
        if isinstance(raw, str):
            text = raw.strip()
            if len(text) > self.max_chars:
                raise ParamError(
                    self.name,
                    f"{self.rule()}, at most {self.max_chars:,} characters (got a {len(text):,}-character string)",
                )
            if not text:
                if self.optional:
                    return None
                raise ParamError(self.name, f"{self.rule()}; it is missing (empty)")
            raw = text
        elif raw is None:
            if self.optional:
                return None
            raise ParamError(self.name, f"{self.rule()}; it is missing")
        if self.kind == "text":
            if not isinstance(raw, str):
                raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})")
            return raw
        if self.kind == "choice":
            return self._parse_choice(raw)
        if self.kind == "bool":
            return self._parse_bool(raw)
        return self._parse_number(raw)

    def _parse_choice(self, raw: object) -> str:
        if isinstance(raw, str) and raw in self.choices:
            return raw
        raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})")

    def _parse_bool(self, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})")

    def _parse_number(self, raw: object) -> int | float:
        if isinstance(raw, str):
            try:
                value: object = int(raw) if self.kind == "int" else float(raw)
            except ValueError:
                raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})") from None
        else:
            value = raw
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})")
        if self.kind == "int":
            if isinstance(value, float):
                # JSON has one number type: 8.0 is the integer 8, 8.5 is not an integer.
                if not value.is_integer():
                    raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})")
                value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                raise ParamError(self.name, f"{self.rule()} (got {_shown(raw)})")
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        too_high = self.high is not None and value > self.high
        if too_low or too_high:
            raise ParamError(self.name, f"{self.rule()} (got {_shown_number(value)})")
        return value

    def as_json(self) -> dict[str, object]:
        """The declaration as data, for ``calc --list --json`` and the pages."""
        data: dict[str, object] = {
            "name": self.name,
            "type": self.kind,
            "default": self.default,
            "unit": self.unit,
            "label": self.label,
            "help": self.help,
        }
        if self.low is not None:
            data["min"] = self.low
            data["min_exclusive"] = self.low_open
        if self.high is not None:
            data["max"] = self.high
        if self.choices:
            data["choices"] = dict(self.choices)
        if self.optional:
            data["optional"] = True
        if self.max_chars != MAX_TEXT:
            data["max_chars"] = self.max_chars
        return data


def parse_all(params: Iterable[Param], raw: Mapping[str, object], *, owner: str) -> dict[str, ParamValue]:
    """Every declared parameter, checked, with defaults for the ones ``raw`` leaves out.

    A name that is not declared is refused (a typo must not silently fall back to the default).
    """
    declared = {param.name: param for param in params}
    for name in raw:
        if name not in declared:
            known = ", ".join(declared)
            raise ParamError(str(name)[:60], f"{_shown(name)} is not a parameter of {owner}; use {known}")
    return {
        name: param.parse(raw[name]) if name in raw else param.default for name, param in declared.items()
    }

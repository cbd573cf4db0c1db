"""Card text citing a calculator's output for a named parameter set: ``{{calc.SET.OUTPUT}}``.

Pure Python: the Django side looks the parameter sets up (one query per page) and hands this
module a mapping from set slug to calculator name, or to the set's computed result. See
docs/architecture.md ("Named parameter sets and card citations").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from ..calculators import CALCULATORS
from ..core.calculator import Result
from ..core.numbers import MISSING, format_number

PREFIX = "calc."
PLACEHOLDER = re.compile(r"\{\{\s*calc\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)\s*\}\}")
_CALC_NUMBER = re.compile(r"calc\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)")


class Citation(NamedTuple):
    slug: str
    key: str

    def __str__(self) -> str:
        return f"{PREFIX}{self.slug}.{self.key}"


def in_text(text: str) -> list[Citation]:
    return [Citation(slug, key) for slug, key in PLACEHOLDER.findall(text)]


def is_calc_number(name: str) -> bool:
    """Whether a live number's name cites a calculator (else it names one of the sweep's)."""
    return name.startswith(PREFIX)


def parse_calc_number(name: str) -> Citation | None:
    """A ``calc.SET.OUTPUT`` live number's name as a citation; None if it is not written that way."""
    match = _CALC_NUMBER.fullmatch(name.strip())
    return Citation(match[1], match[2]) if match else None


def slugs(citations: Iterable[Citation]) -> set[str]:
    return {citation.slug for citation in citations}


def problem(citation: Citation, calculators_of_sets: Mapping[str, str]) -> str | None:
    """Why a citation cannot be resolved, or None when it can.

    ``calculators_of_sets`` maps each known parameter set's slug to its calculator's name.
    """
    calculator_name = calculators_of_sets.get(citation.slug)
    if calculator_name is None:
        return f"{citation}: there is no parameter set '{citation.slug}'"
    calculator = CALCULATORS.get(calculator_name)
    if calculator is None:
        return f"{citation}: the set's calculator '{calculator_name}' does not exist"
    if citation.key not in calculator.output_keys:
        return f"{citation}: '{citation.key}' is not an output of {calculator_name}; use one of {', '.join(calculator.output_keys)}"
    return None


def problems(citations: Iterable[Citation], calculators_of_sets: Mapping[str, str]) -> list[str]:
    found = (problem(citation, calculators_of_sets) for citation in dict.fromkeys(citations))
    return [message for message in found if message]


def value_of(citation: Citation, results: Mapping[str, Result | None]):
    result = results.get(citation.slug)
    if result is None or citation.key not in result.outputs:
        return None
    return result.outputs[citation.key].value


def text_of(citation: Citation, results: Mapping[str, Result | None]) -> str:
    """The cited output as the site prints it (no unit: the sentence around it says it)."""
    value = value_of(citation, results)
    if isinstance(value, str):
        return value
    return format_number(value) if value is not None else MISSING


def fill(
    text: str, results: Mapping[str, Result | None], wrap: Callable[[Citation, str], str] | None = None
) -> str:
    """Every placeholder replaced by its value; what cannot be resolved shows as a dash."""

    def replace(match: re.Match[str]) -> str:
        citation = Citation(match[1], match[2])
        value = text_of(citation, results)
        return wrap(citation, value) if wrap else value

    return PLACEHOLDER.sub(replace, text)

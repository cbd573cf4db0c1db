"""The live calculators, by name: the names are the interface (URLs, the CLI, card citations).

Every module of this package is one calculator and builds its ``CALCULATOR``; they are found
here by walking the package, in the order each declares, so adding one is adding its file. See
docs/architecture.md ("Adding a calculator").
"""

from __future__ import annotations

import importlib
import pkgutil
from itertools import pairwise

from ..core.calculator import Calculator


def discovered(package: str = __name__) -> dict[str, Calculator]:
    """Every calculator module under ``package``, by name, in their declared order."""
    found = []
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        calculator = importlib.import_module(f"{package}.{module.name}").CALCULATOR
        if not isinstance(calculator, Calculator):
            raise TypeError(f"{package}.{module.name}.CALCULATOR is not a Calculator")
        found.append(calculator)
    found.sort(key=lambda calculator: calculator.order)
    for first, second in pairwise(found):
        if first.order == second.order:
            raise TypeError(f"{first.name} and {second.name} declare the same order, {first.order}")
    names = [calculator.name for calculator in found]
    if len(set(names)) != len(names):
        raise TypeError(f"two calculators share a name: {sorted(names)}")
    return {calculator.name: calculator for calculator in found}


CALCULATORS: dict[str, Calculator] = discovered()


class UnknownCalculator(KeyError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"{self.name[:60]!r} is not a calculator; use one of {', '.join(CALCULATORS)}"


def get(name: str) -> Calculator:
    try:
        return CALCULATORS[name]
    except KeyError:
        raise UnknownCalculator(name) from None

"""The live calculators, by name: the names are the interface (URLs, the CLI, card citations).

To add one, write a module here that builds a ``CALCULATOR`` and list it below; see
docs/architecture.md ("Adding a calculator").
"""

from __future__ import annotations

from ..calculator import Calculator
from . import (
    cost,
    decode_ceiling,
    dpo,
    finetune_memory,
    kv_cache,
    prefill,
    prefix_cache,
    roofline,
    sizing,
    speculative,
)

CALCULATORS: dict[str, Calculator] = {
    module.CALCULATOR.name: module.CALCULATOR
    for module in (
        prefill,
        prefix_cache,
        decode_ceiling,
        kv_cache,
        speculative,
        roofline,
        sizing,
        cost,
        finetune_memory,
        dpo,
    )
}


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

"""The course's prices, each with where it comes from: the one table cards and calculators read.

None of these is a provider's current list price: each is the figure the course works with, and
``source`` says where in the course it is stated or how it is worked out. Dollars; token prices
per million tokens. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    name: str
    usd: float
    unit: str  # what one ``usd`` buys: "GPU-hour", "1M input tokens", ...
    source: str


PRICES: tuple[Price, ...] = (
    Price(
        "dedicated-gpu-hour",
        8.0,
        "GPU-hour",
        "Fireworks dedicated deployment as the course prices it: lesson 10's deployment ran 38 "
        "minutes for about $5.07 (5.07 ÷ 38 × 60 = $8.01 an hour), and lesson 15's memo example "
        "uses $8 per GPU-hour",
    ),
    Price(
        "gpt-oss-20b-input",
        0.07,
        "1M input tokens",
        "lesson 09's example price for gpt-oss-20b (evaluate.py's candidate `@0.07/0.30`)",
    ),
    Price(
        "gpt-oss-20b-output",
        0.30,
        "1M output tokens",
        "lesson 09's example price for gpt-oss-20b (evaluate.py's candidate `@0.07/0.30`)",
    ),
    Price(
        "capstone-serverless-input",
        0.15,
        "1M input tokens",
        "lesson 15's build_memo example flags: serverless $0.15 in per million tokens",
    ),
    Price(
        "capstone-serverless-output",
        0.60,
        "1M output tokens",
        "lesson 15's build_memo example flags: serverless $0.60 out per million tokens",
    ),
)

_BY_NAME = {price.name: price for price in PRICES}


def price(name: str) -> Price:
    """The price called ``name``; KeyError lists the names there are."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no price {name!r} (there are {', '.join(_BY_NAME)})") from None

"""Live numbers: names that card text can cite, resolved from a simulated sweep.

Card text writes ``{{sim.NAME}}``; the page shows the model's value for the card's
scenario. Pure Python, like the model, so it is tested without a database.

The names (N is a concurrency level, U a number of users):

| name | value |
| --- | --- |
| ``cN.agg_tok_s`` | total tokens per second at C = N (N must be one of the scenario's levels) |
| ``cN.user_tok_s`` | per-user tokens per second at C = N (median once text flows) |
| ``cN.ttft_p50_ms``, ``cN.ttft_p95_ms`` | time to first token at C = N, median and 95th percentile |
| ``cN.goodput_rps`` | requests per second within the SLO at C = N |
| ``cN.requests`` | requests sent at C = N |
| ``capacity`` | the highest level whose TTFT p95 is within the SLO |
| ``slo_ms``, ``slots``, ``step_ms``, ``max_tokens``, ``growth_pct`` | the scenario's settings |
| ``step_ms.cN`` | one decode step with N requests active, in ms |
| ``ideal_user_tok_s.cN`` | 1000 ÷ ``step_ms.cN``: per-user speed of the ideal server |
| ``speedup.cN`` | ``cN.agg_tok_s`` ÷ ``c1.agg_tok_s`` (needs level 1) |
| ``keeps_pct.cN``, ``slower_pct.cN`` | ``cN.user_tok_s`` as a percentage of ``c1.user_tok_s``, and 100 minus it |
| ``replicas.uU`` | servers needed for U concurrent users: U ÷ capacity, rounded up |
| ``replicas_headroom.uU`` | ``replicas.uU`` plus 20% headroom, rounded up |
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..core.numbers import MISSING, format_number
from ..sweep.metrics import SweepResult
from ..sweep.sweep_params import MAX_LEVEL, SweepParams

PLACEHOLDER = re.compile(r"\{\{\s*sim\.([A-Za-z0-9_.]*)\s*\}\}")
HEADROOM = 1.2
MAX_USERS = 10_000_000

LEVEL_METRICS = {
    "agg_tok_s": "tok/s",
    "user_tok_s": "tok/s",
    "ttft_p50_ms": "ms",
    "ttft_p95_ms": "ms",
    "goodput_rps": "req/s",
    "requests": "",
}
SETTINGS = {
    "slo_ms": lambda p: p.slo_ms,
    "slots": lambda p: p.server.slots,
    "step_ms": lambda p: p.server.step_ms,
    "max_tokens": lambda p: p.max_tokens,
    "growth_pct": lambda p: p.server.growth * 100,
}
PER_LEVEL = ("step_ms", "ideal_user_tok_s", "speedup", "keeps_pct", "slower_pct")
PER_USERS = ("replicas", "replicas_headroom")

_LEVEL_NUMBER = re.compile(r"c([0-9]{1,4})\.([a-z0-9_]+)")
_DERIVED = re.compile(r"([a-z_]+)\.(c|u)([0-9]{1,8})")


class UnknownLiveNumber(ValueError):
    """A name that is not on the list, or that the scenario cannot answer."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"sim.{name}: {reason}")
        self.name = name
        self.reason = reason


@dataclass(frozen=True)
class LiveNumber:
    """A parsed name: what to compute, for which level or user count."""

    name: str
    compute: Callable[[SweepResult], float | None]

    def value(self, result: SweepResult) -> float | None:
        return self.compute(result)

    def text(self, result: SweepResult) -> str:
        # The site's one formatting rule (felab_sim/engine/core/numbers.py); a dash when it cannot be computed.
        return format_number(self.compute(result))


def _level(result: SweepResult, conc: int):
    for level in result.levels:
        if level.conc == conc:
            return level
    return None


def _metric(conc: int, metric: str) -> Callable[[SweepResult], float | None]:
    def compute(result: SweepResult) -> float | None:
        value = getattr(_level(result, conc), metric, None)
        return None if value is None else float(value)

    return compute


def _ratio(conc: int, metric: str, scale: float = 1.0, offset: float = 0.0):
    def compute(result: SweepResult) -> float | None:
        base = getattr(_level(result, 1), metric, None)
        value = getattr(_level(result, conc), metric, None)
        if not base or value is None:
            return None
        return offset + scale * value / base

    return compute


def _replicas(users: int, headroom: bool):
    def compute(result: SweepResult) -> float | None:
        if not result.capacity:
            return None
        replicas = math.ceil(users / result.capacity)
        return float(math.ceil(replicas * HEADROOM) if headroom else replicas)

    return compute


def parse(name: str, params: SweepParams | None) -> LiveNumber:
    """The live number a name stands for, checked against the scenario's parameters.

    Without parameters only the name itself is checked: whether it is on the list at all.
    """
    if name == "capacity":
        return LiveNumber(name, lambda r: None if r.capacity is None else float(r.capacity))
    if name in SETTINGS:
        getter = SETTINGS[name]
        return LiveNumber(name, lambda r: float(getter(r.params)))
    if match := _LEVEL_NUMBER.fullmatch(name):
        conc, metric = int(match[1]), match[2]
        if metric not in LEVEL_METRICS:
            raise UnknownLiveNumber(
                name, f"'{metric}' is not a sweep metric; use one of {', '.join(LEVEL_METRICS)}"
            )
        if params is not None and conc not in params.levels:
            levels = ", ".join(str(level) for level in params.levels)
            raise UnknownLiveNumber(name, f"level {conc} is not in the scenario's levels ({levels})")
        return LiveNumber(name, _metric(conc, metric))
    if match := _DERIVED.fullmatch(name):
        kind, unit, number = match[1], match[2], int(match[3])
        if unit == "c" and kind in PER_LEVEL:
            return _per_level(name, kind, number, params)
        if unit == "u" and kind in PER_USERS:
            if not 1 <= number <= MAX_USERS:
                raise UnknownLiveNumber(name, f"users must be from 1 to {MAX_USERS:,}")
            return LiveNumber(name, _replicas(number, headroom=kind == "replicas_headroom"))
    raise UnknownLiveNumber(
        name, "not a known live number; see felab_sim/engine/course/live_numbers.py for the list"
    )


def _per_level(name: str, kind: str, conc: int, params: SweepParams | None) -> LiveNumber:
    if not 1 <= conc <= MAX_LEVEL:
        raise UnknownLiveNumber(name, f"level must be from 1 to {MAX_LEVEL}")
    if kind == "step_ms":
        return LiveNumber(name, lambda r: r.params.server.decode_step_ms(conc))
    if kind == "ideal_user_tok_s":
        return LiveNumber(name, lambda r: 1000.0 / r.params.server.decode_step_ms(conc))
    missing = [] if params is None else [level for level in (1, conc) if level not in params.levels]
    if missing:
        raise UnknownLiveNumber(name, f"needs level {missing[0]} in the scenario's levels")
    if kind == "speedup":
        return LiveNumber(name, _ratio(conc, "agg_tok_s"))
    if kind == "keeps_pct":
        return LiveNumber(name, _ratio(conc, "user_tok_s", 100.0))
    return LiveNumber(name, _ratio(conc, "user_tok_s", -100.0, 100.0))


def placeholder(name: str) -> str:
    """How card text cites a live number."""
    return "{{sim." + name + "}}"


def names_in(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def problems(texts: Iterable[str], params: SweepParams | None) -> list[str]:
    """Every placeholder that cannot be resolved, with the reason; empty when all are fine."""
    errors, known = [], []
    for name in dict.fromkeys(name for text in texts for name in names_in(text)):
        try:
            parse(name, params)
        except UnknownLiveNumber as error:
            errors.append(str(error))
        else:
            known.append(name)
    # A name that is not on the list is named as such: a scenario would not make it resolve.
    if known and params is None:
        errors.append(f"sim.{known[0]}: this card cites live numbers, so it needs a scenario")
    return errors


def value_of(name: str, result: SweepResult | None) -> float | None:
    """A live number's value; None when it cannot be resolved, never an exception."""
    if result is None:
        return None
    try:
        return parse(name, result.params).value(result)
    except UnknownLiveNumber:
        return None


def text_of(name: str, result: SweepResult | None) -> str:
    """A live number's printed value; a dash when it cannot be resolved, never an exception."""
    if result is None:
        return MISSING
    try:
        return parse(name, result.params).text(result)
    except UnknownLiveNumber:
        return MISSING


def fill(text: str, result: SweepResult | None, wrap: Callable[[str, str], str] | None = None) -> str:
    """Replace every placeholder with its value; what cannot be resolved shows as a dash."""

    def replace(match: re.Match[str]) -> str:
        value = text_of(match[1], result)
        return wrap(match[1], value) if wrap else value

    return PLACEHOLDER.sub(replace, text)

"""The sweep's metrics (lesson 03) from client-side timings, simulated or measured alike.

Client-side timings (:class:`RequestTiming`, ``wall_s``) are in seconds, as
``time.perf_counter()`` gives them to the real load generator; the metrics convert to ms and
tok/s. Pure Python.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import sub
from statistics import median

from ..core.numbers import format_with_unit
from .sweep_params import SweepParams


@dataclass(frozen=True)
class RequestTiming:
    """The client's view of one request: when it was sent and when each content chunk arrived.

    Seconds on any one clock (the simulator: virtual seconds from the level's start).
    """

    sent: float
    chunk_times: tuple[float, ...]


def nearest_rank(values: Iterable[float], p: float) -> float:
    """Nearest-rank percentile: sort, take index ceil(p/100 * n) - 1."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("nearest_rank of no values")
    if not 0 < p <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {p}")
    # p * n before dividing keeps e.g. 95% of 20 exactly 19.
    return ordered[max(0, math.ceil(p * len(ordered) / 100) - 1)]


@dataclass(frozen=True)
class LevelResult:
    """One level's metrics at full precision; :meth:`as_dict` rounds for JSON.

    ``user_tok_s`` is None when no request streamed two chunks (no gap to measure); the TTFT
    fields are None when no request returned a chunk (a failed real run).
    """

    conc: int
    requests: int
    agg_tok_s: float
    user_tok_s: float | None
    ttft_p50_ms: float | None
    ttft_p95_ms: float | None
    goodput_rps: float
    tokens: int
    wall_s: float

    def as_dict(self) -> dict[str, object]:
        """The JSON keys of docs/architecture.md ("The practice server and the sweep"). Rates and
        times to 0.1 as in the course's table; goodput to 0.01, because at these loads it is usually below 1 request per second."""

        def r1(x: float | None) -> float | None:
            return None if x is None else round(x, 1)

        return {
            "conc": self.conc,
            "requests": self.requests,
            "agg_tok_s": round(self.agg_tok_s, 1),
            "user_tok_s": r1(self.user_tok_s),
            "ttft_p50_ms": r1(self.ttft_p50_ms),
            "ttft_p95_ms": r1(self.ttft_p95_ms),
            "goodput_rps": round(self.goodput_rps, 2),
        }


def level_metrics(
    conc: int,
    timings: Sequence[RequestTiming],
    wall_s: float,
    slo_ms: float,
) -> LevelResult:
    """The sweep's metrics (docs/architecture.md) from client-side timings (simulated or measured alike).

    TTFT: sent -> first content chunk. Per request, speed = 1 / median gap between its
    consecutive chunks; ``user_tok_s`` is the median of those. ``agg_tok_s``: all chunks /
    wall. ``goodput_rps``: requests with TTFT <= SLO / wall. Requests with no chunk have no
    TTFT and are not good; requests with under two chunks (or a zero median gap, which a real
    client can see when chunks share a read) have no speed.
    """
    if not wall_s > 0:
        raise ValueError(f"wall_s must be positive, got {wall_s}")
    tokens = 0
    ttfts: list[float] = []
    speeds: list[float] = []
    for timing in timings:
        chunks = timing.chunk_times
        n = len(chunks)
        tokens += n
        if not n:
            continue
        ttfts.append((chunks[0] - timing.sent) * 1000.0)
        if n > 1:
            gap = median(map(sub, chunks[1:], chunks[:-1]))
            if gap > 0:
                speeds.append(1.0 / gap)
    good = sum(1 for t in ttfts if t <= slo_ms)
    return LevelResult(
        conc=conc,
        requests=len(timings),
        agg_tok_s=tokens / wall_s,
        user_tok_s=median(speeds) if speeds else None,
        ttft_p50_ms=nearest_rank(ttfts, 50) if ttfts else None,
        ttft_p95_ms=nearest_rank(ttfts, 95) if ttfts else None,
        goodput_rps=good / wall_s,
        tokens=tokens,
        wall_s=wall_s,
    )


def capacity(levels: Iterable[LevelResult], slo_ms: float) -> int | None:
    """The highest C whose TTFT p95 is within the SLO, or None if none is."""
    ok = [lv.conc for lv in levels if lv.ttft_p95_ms is not None and lv.ttft_p95_ms <= slo_ms]
    return max(ok) if ok else None


@dataclass(frozen=True)
class SweepResult:
    params: SweepParams
    levels: tuple[LevelResult, ...]
    capacity: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "params": self.params.as_flat(),
            "levels": [lv.as_dict() for lv in self.levels],
            "slo_ms": self.params.slo_ms,
            "capacity": self.capacity,
        }


def capacity_sentence(result: SweepResult) -> str:
    """One sentence: where capacity is, and why the next level misses the SLO."""
    slo = format_with_unit(result.params.slo_ms, "ms")
    levels = result.levels
    slots = result.params.server.slots
    if result.capacity is None:
        first = levels[0]
        return (
            f"No level meets the SLO: already at C = {first.conc}, TTFT p95 is {format_with_unit(first.ttft_p95_ms, 'ms')}, "
            f"over the {slo} target, so capacity is below {first.conc}."
        )
    at_capacity = next(level for level in levels if level.conc == result.capacity)
    beyond = next((level for level in levels if level.conc > result.capacity), None)
    sentence = (
        f"Capacity is C = {result.capacity}: the highest level whose TTFT p95 "
        f"({format_with_unit(at_capacity.ttft_p95_ms, 'ms')}) stays within the {slo} SLO."
    )
    if beyond is None:
        return (
            f"Every level you swept meets the {slo} SLO, up to C = {result.capacity} "
            f"(TTFT p95 {format_with_unit(at_capacity.ttft_p95_ms, 'ms')}): capacity is at least "
            f"{result.capacity}. Add higher levels to find the knee."
        )
    why = (
        f"requests queue for one of the {slots} slots"
        if beyond.conc > slots
        else "prefill and the slower shared steps push the first token late"
    )
    return (
        sentence
        + f" At C = {beyond.conc}, {why}, and TTFT p95 jumps to {format_with_unit(beyond.ttft_p95_ms, 'ms')}."
    )

"""A run's results: each request's times, the timeseries, what held the run back, the summary
LLMServingSim's validation prints and the tails beside it, and the run stored exactly and read back
(anchor_runs.json). Per request the fields follow LLMServingSim's requests.jsonl: arrival, queued,
first and last token; TTFT = first token − queued; TPOT = (last − first token) ÷ (output tokens −
1); latency = last token − queued.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .kv_pool import PoolSize
from .step_time import Calibration


@dataclass(frozen=True)
class RequestResult:
    request_id: int
    input_toks: int
    output_toks: int
    arrival_time: float
    queued_ts: float
    first_token_ts: float
    last_token_ts: float
    preemptions: int
    cached_tokens: int

    @property
    def ttft(self) -> float:
        return self.first_token_ts - self.queued_ts

    @property
    def latency(self) -> float:
        return self.last_token_ts - self.queued_ts

    @property
    def tpot(self) -> float | None:
        if self.output_toks < 2:
            return None
        return (self.last_token_ts - self.first_token_ts) / (self.output_toks - 1)


@dataclass(frozen=True)
class Sample:
    t: float
    running: int
    waiting: int
    kv_pct: float


@dataclass
class Counters:
    """What held a run back, counted in steps (a step of several replicas counts once a reason).

    ``waiting_by`` counts the steps that left requests waiting by why the queue stopped: "blocks"
    (the first waiting request's blocks did not fit, or a running one was preempted), "seqs"
    (``max_num_seqs`` running) or "budget" (``max_num_batched_tokens`` spent). The steps that
    left nothing waiting are split by what their time went on: ``compute_bound`` steps spent
    longer on arithmetic than on reading weights and KV, the rest were bandwidth-bound.
    """

    steps: int = 0
    waiting_by: dict[str, int] = field(default_factory=dict)
    unqueued_steps: int = 0
    compute_bound: int = 0
    peak_kv_pct: float = 0.0


@dataclass
class Result:
    pool: PoolSize
    requests: list[RequestResult]
    timeseries: list[Sample]
    steps: int
    max_running: int
    preemptions: int
    calibration: Calibration
    summary: dict[str, float] = field(default_factory=dict)
    counters: Counters = field(default_factory=Counters)
    work: float = 0.0  # work units spent (simulate.py's _step_work)

    def as_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "percentiles": tail_latencies(self.requests),
            "requests": [
                {
                    "request_id": r.request_id,
                    "input_toks": r.input_toks,
                    "output_toks": r.output_toks,
                    "arrival_time": r.arrival_time,
                    "queued_ts": r.queued_ts,
                    "first_token_ts": r.first_token_ts,
                    "last_token_ts": r.last_token_ts,
                }
                for r in self.requests
            ],
            "timeseries": [
                {"t": s.t, "running": s.running, "waiting": s.waiting, "kv_pct": s.kv_pct}
                for s in self.timeseries
            ],
        }


# A stored run's request rows and samples, in these fields' order (the file keeps lists, not dicts).
REQUEST_FIELDS = tuple(RequestResult.__dataclass_fields__)
SAMPLE_FIELDS = tuple(Sample.__dataclass_fields__)


def stored_result(result: Result) -> dict[str, Any]:
    """Every field of a run as JSON, exact (floats round-trip): what anchor_runs.json keeps of
    felab's run of each measured trace, read back by :func:`result_from_stored`."""
    return {
        "pool": asdict(result.pool),
        "requests": [[getattr(r, name) for name in REQUEST_FIELDS] for r in result.requests],
        "timeseries": [[getattr(s, name) for name in SAMPLE_FIELDS] for s in result.timeseries],
        "steps": result.steps,
        "max_running": result.max_running,
        "preemptions": result.preemptions,
        "calibration": asdict(result.calibration),
        "summary": dict(result.summary),
        "counters": asdict(result.counters),
        "work": result.work,
    }


def result_from_stored(data: Mapping[str, Any]) -> Result:
    """The run :func:`stored_result` wrote, as ``simulate`` returned it."""
    return Result(
        pool=PoolSize(**data["pool"]),
        requests=[RequestResult(*row) for row in data["requests"]],
        timeseries=[Sample(*row) for row in data["timeseries"]],
        steps=data["steps"],
        max_running=data["max_running"],
        preemptions=data["preemptions"],
        calibration=Calibration(**data["calibration"]),
        summary=dict(data["summary"]),
        counters=Counters(**{**data["counters"], "waiting_by": dict(data["counters"]["waiting_by"])}),
        work=data["work"],
    )


def summarise(requests: list[RequestResult], kv_tokens: int, max_running: int) -> dict[str, float | None]:
    """The summary LLMServingSim's validation prints, from per-request times."""
    if not requests:
        return {}
    start = min(r.queued_ts for r in requests)
    end = max(r.last_token_ts for r in requests)
    tpots = [t for t in (r.tpot for r in requests) if t is not None]
    total = end - start
    return {
        "ttft_mean_ms": 1000 * sum(r.ttft for r in requests) / len(requests),
        # None where no request has two tokens to time between: no TPOT exists, not 0 ms.
        "tpot_mean_ms": 1000 * sum(tpots) / len(tpots) if tpots else None,
        "latency_mean_ms": 1000 * sum(r.latency for r in requests) / len(requests),
        "total_s": total,
        "output_tok_s": sum(r.output_toks for r in requests) / total if total > 0 else 0.0,
        "kv_tokens": kv_tokens,
        # None where every request finished in the step that prefilled it: none stayed running.
        "max_running": max_running or None,
    }


def measured_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The same summary from a measured requests.jsonl (LLMServingSim's field names)."""
    results = [
        RequestResult(
            i,
            int(row["input_toks"]),
            int(row["output_toks"]),
            float(row["arrival_time"]),
            float(row["queued_ts"]),
            float(row["first_token_ts"]),
            float(row["last_token_ts"]),
            0,
            0,
        )
        for i, row in enumerate(rows)
    ]
    return summarise(results, 0, 0)


def nearest_rank(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent * len(ordered) / 100) - 1)]


# The tails shown beside the means: the percent, and its name in a key (ttft_p90_ms).
TAIL_PERCENTS = (50, 90, 99)


def tail_latencies(requests: list[RequestResult]) -> dict[str, float | None]:
    """The p50, p90 and p99 of the requests' TTFT and TPOT in ms, by nearest rank: the smallest
    value at least that percent of requests are within (p99 of 100 requests is the 99th smallest,
    of 10 the largest). None where no request has the figure (TPOT needs two output tokens)."""
    found: dict[str, float | None] = {}
    ttfts = [1000 * r.ttft for r in requests]
    tpots = [1000 * t for t in (r.tpot for r in requests) if t is not None]
    for name, values in (("ttft", ttfts), ("tpot", tpots)):
        for percent in TAIL_PERCENTS:
            found[f"{name}_p{percent}_ms"] = nearest_rank(values, percent) if values else None
    return found

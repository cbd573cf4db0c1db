"""The timing model of lesson 03's practice server, its concurrency sweep and the sweep's metrics.

Pure Python (standard library only, no Django) so that the practice server, the load generator,
the management command and the views can all share it.

Conventions:

* Server rules are in milliseconds, as the course states them (``step_ms``, ``prefill_ms``).
* Client-side timings (:class:`RequestTiming`, ``wall_s``) are in **seconds**, as
  ``time.perf_counter()`` gives them to the real load generator; metrics convert to ms/tok/s.
* The simulator runs in virtual time (seconds from the start of a level), event by event.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import random
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from operator import sub
from statistics import median
from typing import ClassVar

# ParamError: one error type for the sweep and the calculators.
from .params import MAX_TEXT, Param, ParamError, ParamValue

__all__ = [
    "SERVER_PARAMS",
    "SWEEP_PARAMS",
    "WARMUP_PROMPT",
    "WEB_LIMITS",
    "LevelResult",
    "ParamError",
    "PrefixCache",
    "RequestTiming",
    "ServerParams",
    "SweepParams",
    "SweepResult",
    "WebLimits",
    "capacity",
    "check_web_limits",
    "level_events",
    "level_metrics",
    "nearest_rank",
    "output_tokens",
    "prompt_tokens",
    "requests_at_level",
    "run_sweep",
    "simulate_level",
    "step_ms_at",
    "sweep_param",
    "sweep_prompt",
]

TOPICS = (
    "caching",
    "batching",
    "quantization",
    "attention",
    "tokenizers",
    "GPUs",
    "speculation",
    "MoE",
)
# Shorter than one cache block, so it warms nothing a sweep prompt could reuse; the sweep
# sends it to each fresh server only to mirror the course's procedure.
WARMUP_PROMPT = "Warm-up: reply with one word."

BLOCK_TOKENS = 64
CHARS_PER_TOKEN = 4
BLOCK_CHARS = BLOCK_TOKENS * CHARS_PER_TOKEN
PREFILL_BASE_MS = 15.0
OUTPUT_MIN = 60
OUTPUT_MAX = 200

MAX_LEVEL = 1024
MAX_LEVELS = 12
MAX_SLOTS = 1024
MAX_MAX_TOKENS = 4096


# --------------------------------------------------------------------------- validation


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_int(name: str, value: object, lo: int, hi: int) -> int:
    rule = f"{name} must be an integer from {lo} to {hi}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(name, f"{rule} (got {_shown(value)})")
    if not lo <= value <= hi:
        raise ParamError(name, f"{rule} (got {value})")
    return value


def _normalise_levels(value: object) -> tuple[int, ...]:
    rule = f"levels must be 1 to {MAX_LEVELS} concurrency levels, integers from 1 to {MAX_LEVEL}"
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_TEXT:
            raise ParamError("levels", f"{rule} (got a {len(text)}-character string)")
        items: list[object] = [part.strip() for part in text.split(",")] if text else []
    elif isinstance(value, int) and not isinstance(value, bool):
        items = [value]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        items = list(value)
    else:
        raise ParamError("levels", f"{rule} (got {_shown(value)})")
    if not items:
        raise ParamError("levels", f"{rule} (got none)")
    if len(items) > MAX_LEVELS:
        raise ParamError("levels", f"{rule} (got {len(items)})")
    out = set()
    for item in items:
        if isinstance(item, str):
            if not item.isascii() or not item.isdigit():
                raise ParamError("levels", f"{rule} (got {_shown(item)})")
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= MAX_LEVEL:
            raise ParamError("levels", f"{rule} (got {_shown(item)})")
        out.add(item)
    # Sorted and deduplicated: the table, the plots and "user speed falls as C rises" read
    # levels in ascending order, and running a level twice would only repeat identical numbers.
    return tuple(sorted(out))


# --------------------------------------------------------------------------- parameters

# The sweep's flat parameters, declared once (docs/architecture.md, "Parameters: declared once").
# Everything else reads these: ServerParams' and SweepParams' defaults and checks, the /sim/ form,
# the sweep and practice_server commands' flags, the Scenario model's columns, its admin and the
# lesson content's scenarios. The order here is the order of sweep.json's "params", of the form
# and of scenarios.yaml: the server's rules first, then the sweep's.
SWEEP_PARAMS: tuple[Param, ...] = (
    Param(
        "levels",
        "text",
        "1,2,4,8,16,32",
        f"Comma-separated, up to {MAX_LEVELS}, each 1 to {MAX_LEVEL}.",
        label="Concurrency levels",
    ),
    Param(
        "slots",
        "int",
        8,
        "Requests the server batches at once; the rest queue.",
        label="Slots",
        low=1,
        high=MAX_SLOTS,
    ),
    Param(
        "step_ms",
        "float",
        18.0,
        "One decode step with one request.",
        "ms",
        label="Step time alone (ms)",
        low=0,
        low_open=True,
        high=10_000,
    ),
    Param(
        "growth",
        "float",
        0.06,
        "0.06 = each extra request adds 6%.",
        label="Step growth per extra request",
        low=0,
        high=1,
    ),
    Param(
        "prefill_tok_s",
        "float",
        2500.0,
        "How fast the prompt is read.",
        "tok/s",
        label="Prefill speed (tok/s)",
        # At least 1 tok/s: slower is no lesson, and a rate near zero pushes virtual time to
        # infinity (inf - inf is NaN in every metric).
        low=1,
        high=10_000_000,
    ),
    Param(
        "max_tokens",
        "int",
        128,
        "Replies are 60 to 200 tokens, cut here.",
        "tokens",
        label="Max tokens",
        low=1,
        high=MAX_MAX_TOKENS,
    ),
    Param(
        "slo_ms",
        "float",
        500.0,
        "Capacity: the highest C that meets it.",
        "ms",
        label="TTFT p95 target, SLO (ms)",
        low=0,
        low_open=True,
        high=600_000,
    ),
    Param(
        "request_overhead_ms",
        "float",
        4.0,
        "Time outside the server: HTTP.",
        "ms",
        label="Overhead per request (ms)",
        low=0,
        high=1000,
    ),
    Param(
        "token_overhead_ms",
        "float",
        0.2,
        "Parsing each streamed chunk.",
        "ms",
        label="Overhead per token (ms)",
        low=0,
        high=1000,
    ),
)
_DECLARED = {param.name: param for param in SWEEP_PARAMS}


def sweep_param(name: str) -> Param:
    """One of the sweep's declared parameters, by name."""
    return _DECLARED[name]


def _default(name: str) -> ParamValue:
    return _DECLARED[name].default


def _checked(name: str, value: object) -> ParamValue:
    """A constructor's value checked by its declaration. Text is refused here: it is parsed by
    ``from_flat`` (the constructors take numbers, so "8" is a caller's mistake, not a value)."""
    param = _DECLARED[name]
    if isinstance(value, str):
        raise ParamError(name, f"{param.rule()} (got {_shown(value)})")
    return param.parse(value)


@dataclass(frozen=True)
class ServerParams:
    """The practice server's rules (lesson 03). Also drives the real asyncio practice server.

    Its fields are the declared parameters of the same names (SERVER_PARAMS).
    """

    slots: int = _default("slots")  # type: ignore[assignment]
    step_ms: float = _default("step_ms")  # type: ignore[assignment]
    growth: float = _default("growth")  # type: ignore[assignment]
    prefill_tok_s: float = _default("prefill_tok_s")  # type: ignore[assignment]

    def __post_init__(self) -> None:
        for name in _SERVER_KEYS:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))

    def decode_step_ms(self, active: int) -> float:
        """One decode step with ``active`` requests holding a slot."""
        return self.step_ms * (1.0 + self.growth * (active - 1))

    def prefill_ms(self, uncached_tokens: int) -> float:
        """Time from taking a slot to having the first token."""
        return PREFILL_BASE_MS + uncached_tokens / self.prefill_tok_s * 1000.0

    def as_flat(self) -> dict[str, ParamValue]:
        """The server's rules by their declared names (the practice server's /health)."""
        return {name: getattr(self, name) for name in _SERVER_KEYS}


_SERVER_KEYS = tuple(f.name for f in fields(ServerParams))
# The practice server's own subset of the declarations: its command's flags and its /health.
SERVER_PARAMS: tuple[Param, ...] = tuple(param for param in SWEEP_PARAMS if param.name in _SERVER_KEYS)


def step_ms_at(params: SweepParams | ServerParams, active: int) -> float:
    server = params.server if isinstance(params, SweepParams) else params
    return server.decode_step_ms(active)


@dataclass(frozen=True)
class SweepParams:
    """A sweep: which levels, how long the replies, the SLO and the client-side overheads.

    ``levels`` may be given in any order and with repeats; it is stored sorted and deduplicated.
    Its fields, with the server's, are the declared parameters (SWEEP_PARAMS).
    """

    levels: tuple[int, ...] = tuple(int(level) for level in str(_default("levels")).split(","))
    max_tokens: int = _default("max_tokens")  # type: ignore[assignment]
    slo_ms: float = _default("slo_ms")  # type: ignore[assignment]
    request_overhead_ms: float = _default("request_overhead_ms")  # type: ignore[assignment]
    token_overhead_ms: float = _default("token_overhead_ms")  # type: ignore[assignment]
    server: ServerParams = field(default_factory=ServerParams)

    FLAT_KEYS: ClassVar[tuple[str, ...]] = tuple(param.name for param in SWEEP_PARAMS)

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", _normalise_levels(self.levels))
        for name in _SWEEP_KEYS:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))
        if not isinstance(self.server, ServerParams):
            raise ParamError("server", f"server must be a ServerParams (got {_shown(self.server)})")

    @classmethod
    def from_flat(cls, data: Mapping[str, object]) -> SweepParams:
        """Build from flat names (query string, form, JSON, CLI); missing keys take defaults."""
        for key in data:
            if key not in cls.FLAT_KEYS:
                raise ParamError(
                    str(key),
                    f"unknown parameter {_shown(key)}; known: {', '.join(cls.FLAT_KEYS)}",
                )
        # Text or JSON, each value checked by its declaration (levels has its own grammar).
        values = {
            key: _DECLARED[key].parse(data[key]) for key in cls.FLAT_KEYS if key != "levels" and key in data
        }
        server = ServerParams(**{k: values.pop(k) for k in _SERVER_KEYS if k in values})
        if "levels" in data:
            values["levels"] = data["levels"]
        return cls(server=server, **values)  # type: ignore[arg-type]

    def as_flat(self) -> dict[str, object]:
        """JSON-ready flat dict in the declarations' order; ``from_flat(p.as_flat()) == p``."""
        own = {"levels": list(self.levels), **{name: getattr(self, name) for name in _SWEEP_KEYS}}
        server = self.server.as_flat()
        return {name: server[name] if name in server else own[name] for name in self.FLAT_KEYS}


# The sweep's own declared fields (levels aside: it has its own grammar).
_SWEEP_KEYS = tuple(f.name for f in fields(SweepParams) if f.name not in ("levels", "server"))


# --------------------------------------------------------------------------- prompts and cache


def prompt_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def output_tokens(prompt_text: str, max_tokens: int) -> int:
    return min(max_tokens, random.Random(prompt_text).randint(OUTPUT_MIN, OUTPUT_MAX))


def sweep_prompt(i: int) -> str:
    return f"#{i} Summarise the idea of {TOPICS[i % len(TOPICS)]} for a new engineer in 80 words."


def requests_at_level(conc: int) -> int:
    return max(12, 3 * conc)


@lru_cache(maxsize=4096)
def _sweep_prompt_draw(i: int) -> tuple[str, int]:
    # Seeding random.Random with a string hashes it (SHA-512), a few microseconds each;
    # every level and every sweep reuses prompts 0.., so remember the draws.
    text = sweep_prompt(i)
    return text, random.Random(text).randint(OUTPUT_MIN, OUTPUT_MAX)


class PrefixCache:
    """Which 64-token (256-character) prompt blocks the server has seen.

    A block is free when the whole prompt up to the block's end was seen before, so a block is
    keyed by a digest of everything up to its end (chained block by block). Only whole blocks
    count; a prompt's partial tail is always computed. ``max_blocks`` bounds memory for the
    long-running practice server (least recently used blocks go first).
    """

    def __init__(self, max_blocks: int = 65_536) -> None:
        self.max_blocks = max_blocks
        self._blocks: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def uncached_tokens(self, prompt_text: str) -> int:
        """Tokens that need prefill; records the prompt's whole blocks as seen."""
        tokens = prompt_tokens(prompt_text)
        full = len(prompt_text) // BLOCK_CHARS
        if not full:
            return tokens
        free = 0
        counting = True
        key = b""
        blocks = self._blocks
        for b in range(full):
            start = b * BLOCK_CHARS
            chunk = prompt_text[start : start + BLOCK_CHARS].encode("utf-8", "surrogatepass")
            key = hashlib.blake2b(key + chunk, digest_size=16).digest()
            if key in blocks:
                blocks.move_to_end(key)
                if counting:
                    free += 1
            else:
                counting = False
                blocks[key] = None
        while len(blocks) > self.max_blocks:
            blocks.popitem(last=False)
        return tokens - free * BLOCK_TOKENS


# --------------------------------------------------------------------------- metrics


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


# --------------------------------------------------------------------------- the simulator

# An event is (time, code), code = kind * _KIND + request index: two-item tuples compare
# fastest, and the kind (the high part) is the tie-break at equal times, so slot changes
# (release, then arrival) happen before a decode step reads the active count at that instant.
_KIND = 1 << 16  # > 3 * MAX_LEVEL, the most requests in a level
_RELEASE = 0
_ARRIVE = _KIND
_CHUNK = 2 * _KIND


def _simulate(
    params: SweepParams, conc: int, prompts: Sequence[str], n_out: Sequence[int]
) -> tuple[list[RequestTiming], float]:
    """Run one level against a fresh server; returns the client's timings and the wall time.

    Where the client-side overheads go (both chosen so that the defaults give the course's
    measured table and zero gives the ideal server):

    * ``request_overhead_ms`` once per request, between the client sending and the server
      receiving it (connection, request parsing). It is in every TTFT, and at C <= slots it is
      the idle gap a slot sits through between one request's end and the next's arrival.
    * ``token_overhead_ms`` per chunk, paid between the server having a token and the client
      seeing it (serialising, flushing, the client's parse), and the next decode step starts
      only after it: a real streaming server formats and flushes each chunk on the same loop
      that runs its steps. So an inter-token gap is step + overhead: 18.2 ms, 54.9 tok/s at
      C = 1 as measured. Charging it to the client alone would leave every gap at exactly one
      step and the per-user speed at the ideal 55.6.

    The client sees a stream end when the server releases the slot (after the last token's
    decode step) and sends its next request at that moment. The level's wall time runs from
    the first send to the last stream's end.
    """
    server = params.server
    slots = server.slots
    req_ovh = params.request_overhead_ms / 1000.0
    tok_ovh = params.token_overhead_ms / 1000.0
    prefill_base = PREFILL_BASE_MS / 1000.0
    rate = server.prefill_tok_s
    # Step length by active count, precomputed: [0] is unused (a stepping request holds a slot).
    steps = [server.step_ms * (1.0 + server.growth * (a - 1)) / 1000.0 for a in range(slots + 1)]
    gaps = [s + tok_ovh for s in steps]

    n = len(prompts)
    cache = PrefixCache()
    cache.uncached_tokens(WARMUP_PROMPT)  # the warm-up, finished before the level starts

    sent = [0.0] * n
    chunks: list[list[float]] = [[] for _ in range(n)]
    first = min(conc, n)
    heap: list[tuple[float, int]] = [(req_ovh, _ARRIVE + i) for i in range(first)]
    heapq.heapify(heap)
    next_req = first
    active = 0
    waiting: deque[int] = deque()
    wall = 0.0
    heappush = heapq.heappush
    heappop = heapq.heappop
    heapreplace = heapq.heapreplace

    while heap:
        t, code = heap[0]
        if code >= _CHUNK:
            # The hot path, once per token: replace the event in place, no pop + push.
            r = code - _CHUNK
            times = chunks[r]
            times.append(t)
            if len(times) < n_out[r]:
                heapreplace(heap, (t + gaps[active], code))
            else:
                heapreplace(heap, (t + steps[active], r))  # _RELEASE + r
            continue
        heappop(heap)
        if code >= _ARRIVE:
            r = code - _ARRIVE
            if active < slots:
                active += 1
                prefill = prefill_base + cache.uncached_tokens(prompts[r]) / rate
                heappush(heap, (t + prefill + tok_ovh, _CHUNK + r))
            else:
                waiting.append(r)
        else:  # a release: the slot passes to the longest waiter, and the client sees the end
            if waiting:
                w = waiting.popleft()
                prefill = prefill_base + cache.uncached_tokens(prompts[w]) / rate
                heappush(heap, (t + prefill + tok_ovh, _CHUNK + w))
            else:
                active -= 1
            wall = t
            if next_req < n:
                sent[next_req] = t
                heappush(heap, (t + req_ovh, _ARRIVE + next_req))
                next_req += 1

    timings = [RequestTiming(sent[i], tuple(chunks[i])) for i in range(n)]
    return timings, wall


def _level_inputs(params: SweepParams, conc: int) -> tuple[list[str], list[int]]:
    cap = params.max_tokens
    prompts = []
    n_out = []
    for i in range(requests_at_level(conc)):
        text, draw = _sweep_prompt_draw(i)
        prompts.append(text)
        n_out.append(draw if draw < cap else cap)
    return prompts, n_out


def simulate_level(params: SweepParams, conc: int) -> tuple[LevelResult, list[RequestTiming]]:
    """One level of the sweep against a fresh server: ``requests_at_level(conc)`` requests, at
    most ``conc`` in flight. ``timings[i]`` is request i, whose prompt is ``sweep_prompt(i)``."""
    _check_int("levels", conc, 1, MAX_LEVEL)
    prompts, n_out = _level_inputs(params, conc)
    timings, wall = _simulate(params, conc, prompts, n_out)
    return level_metrics(conc, timings, wall, params.slo_ms), timings


def run_sweep(params: SweepParams | None = None) -> SweepResult:
    """Simulate every level; each level's timings are dropped once its metrics are taken."""
    if params is None:
        params = SweepParams()
    results = tuple(simulate_level(params, conc)[0] for conc in params.levels)
    return SweepResult(params=params, levels=results, capacity=capacity(results, params.slo_ms))


# --------------------------------------------------------------------------- web caps


# Work units, one about a heap level's comparison: fitted to bench/bench_model.py's shapes,
# which then cost 43-60 ns of CPU a unit on the development machine (2026-12-01).
EVENT_UNITS = 2  # popping or replacing one event, besides the heap's depth
REQUEST_UNITS = 21  # a request's own cost: its timing record, its metrics (median gap, TTFT)


@lru_cache(maxsize=4096)
def level_events(conc: int, max_tokens: int) -> int:
    """The events the simulator processes for one level: each request's arrival, each of its
    streamed tokens, and its release. Exact: each reply's length is drawn from its prompt."""
    n = requests_at_level(conc)
    return sum(min(_sweep_prompt_draw(i)[1], max_tokens) for i in range(n)) + 2 * n


@dataclass(frozen=True)
class WebLimits:
    """Caps on the sweeps the web endpoints simulate, so that each takes at most about 110 ms
    of CPU here, and /sim/, which also draws it, under 250 ms (README "Benchmarks").

    Virtual time is free: the cost is the events the simulator processes (level_events), each
    a heap operation whose price grows with the heap, which holds an event per request in
    flight (about min(C, slots)), plus each request's own record and metrics. Counting streamed
    tokens alone missed both: twelve levels near 1,000 at 11 tokens a reply stream under
    400,000 tokens but simulate 36,000 requests on a heap of 1,024 (0.3-0.6 s).
    """

    max_work: int

    def events(self, params: SweepParams) -> int:
        return sum(level_events(conc, params.max_tokens) for conc in params.levels)

    def work(self, params: SweepParams) -> int:
        """The simulation's cost in work units (about 45 ns each here)."""
        total = 0.0
        for conc in params.levels:
            depth = math.log2(min(conc, params.server.slots) + 1)
            total += level_events(conc, params.max_tokens) * (EVENT_UNITS + depth)
            total += REQUEST_UNITS * requests_at_level(conc)
        return math.ceil(total)


WEB_LIMITS = WebLimits(max_work=2_000_000)


def check_web_limits(params: SweepParams, limits: WebLimits = WEB_LIMITS) -> None:
    """Raise ParamError if the sweep is too big for a web request; the message states the cap."""
    work = limits.work(params)
    if work > limits.max_work:
        raise ParamError(
            "levels",
            f"levels: this sweep would simulate {limits.events(params):,} events (each request's "
            f"arrival, tokens and end) for {work:,} units of work, counting each event by how many "
            f"requests are in flight; the web cap is {limits.max_work:,}. Use fewer or lower "
            "levels, a smaller max_tokens or fewer slots, or run `manage.py sweep`.",
        )

"""The simulator: lesson 03's practice server and its concurrency sweep, event by event.

Server rules are in milliseconds, as the course states them (``step_ms``, ``prefill_ms``); the
simulator runs in virtual time (seconds from the start of a level). Pure Python, no Django.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from ..core.params import ParamError
from .metrics import LevelResult, RequestTiming, SweepResult, capacity, level_metrics
from .prefix_cache import PrefixCache
from .prompts import WARMUP_PROMPT, requests_at_level, sweep_prompt_and_length
from .sweep_params import PREFILL_BASE_MS, SweepParams, check_level

# The events a sweep may process when its caller sets no cap: every sweep stops, whatever its
# parameters (the command line passes math.inf; the web its own cap, limits.py).
MAX_EVENTS = 20_000_000


class SweepTooBig(ParamError):
    """The sweep reached its cap of events; counted in the loop, as the events are scheduled."""

    def __init__(self, max_events: float) -> None:
        super().__init__(
            "levels",
            f"levels: this sweep reached its cap of {max_events:,.0f} events (each request's arrival, "
            "tokens and end); use fewer or lower levels, a smaller max_tokens or fewer slots, or run "
            "`manage.py sweep`",
        )


# An event is (time, code), code = kind * _KIND + request index: two-item tuples compare
# fastest, and the kind (the high part) is the tie-break at equal times, so slot changes
# (release, then arrival) happen before a decode step reads the active count at that instant.
_KIND = 1 << 16  # > 3 * MAX_LEVEL, the most requests in a level
_RELEASE = 0
_ARRIVE = _KIND
_CHUNK = 2 * _KIND


class LevelClock(NamedTuple):
    """The durations a level's events are spaced by, in seconds of virtual time.

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
    """

    request_overhead: float
    token_overhead: float
    prefill_base: float
    prefill_tok_s: float
    # Step length by active count, precomputed: [0] is unused (a stepping request holds a slot).
    steps: list[float]
    gaps: list[float]  # a step and the token's overhead: one inter-token gap, by active count


def _level_clock(params: SweepParams) -> LevelClock:
    server = params.server
    tok_ovh = params.token_overhead_ms / 1000.0
    steps = [server.step_ms * (1.0 + server.growth * (a - 1)) / 1000.0 for a in range(server.slots + 1)]
    return LevelClock(
        params.request_overhead_ms / 1000.0,
        tok_ovh,
        PREFILL_BASE_MS / 1000.0,
        server.prefill_tok_s,
        steps,
        [s + tok_ovh for s in steps],
    )


def _first_sends(conc: int, n: int, req_ovh: float, max_events: float) -> list[tuple[float, int]]:
    """The event heap as a level starts: its first ``conc`` requests (of ``n``) sent at once, each
    arriving after the request overhead. SweepTooBig if they alone pass ``max_events``."""
    first = min(conc, n)
    if first > max_events:
        raise SweepTooBig(max_events)
    heap = [(req_ovh, _ARRIVE + i) for i in range(first)]
    heapq.heapify(heap)
    return heap


def _simulate(
    params: SweepParams, conc: int, prompts: Sequence[str], n_out: Sequence[int], max_events: float
) -> tuple[list[RequestTiming], float, int]:
    """Run one level against a fresh server; returns the client's timings, the wall time and the
    events processed. SweepTooBig once more than ``max_events`` are scheduled: a request's tokens
    and its end are counted when its stream starts, so the hot path per token costs nothing more.
    The overheads are spent as :class:`LevelClock` says.

    The client sees a stream end when the server releases the slot (after the last token's
    decode step) and sends its next request at that moment. The level's wall time runs from
    the first send to the last stream's end.
    """
    slots = params.server.slots
    req_ovh, tok_ovh, prefill_base, rate, steps, gaps = _level_clock(params)

    n = len(prompts)
    cache = PrefixCache()
    cache.uncached_tokens(WARMUP_PROMPT)  # the warm-up, finished before the level starts

    sent = [0.0] * n
    chunks: list[list[float]] = [[] for _ in range(n)]
    heap = _first_sends(conc, n, req_ovh, max_events)
    events = next_req = len(heap)
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
                events += n_out[r] + 1  # its tokens and its release
                if events > max_events:
                    raise SweepTooBig(max_events)
                prefill = prefill_base + cache.uncached_tokens(prompts[r]) / rate
                heappush(heap, (t + prefill + tok_ovh, _CHUNK + r))
            else:
                waiting.append(r)
        else:  # a release: the slot passes to the longest waiter, and the client sees the end
            if waiting:
                w = waiting.popleft()
                events += n_out[w] + 1
                if events > max_events:
                    raise SweepTooBig(max_events)
                prefill = prefill_base + cache.uncached_tokens(prompts[w]) / rate
                heappush(heap, (t + prefill + tok_ovh, _CHUNK + w))
            else:
                active -= 1
            wall = t
            if next_req < n:
                events += 1
                if events > max_events:
                    raise SweepTooBig(max_events)
                sent[next_req] = t
                heappush(heap, (t + req_ovh, _ARRIVE + next_req))
                next_req += 1

    timings = [RequestTiming(sent[i], tuple(chunks[i])) for i in range(n)]
    return timings, wall, events


def _level_inputs(params: SweepParams, conc: int) -> tuple[list[str], list[int]]:
    cap = params.max_tokens
    prompts = []
    n_out = []
    for i in range(requests_at_level(conc)):
        text, draw = sweep_prompt_and_length(i)
        prompts.append(text)
        n_out.append(draw if draw < cap else cap)
    return prompts, n_out


def _level(params: SweepParams, conc: int, max_events: float) -> tuple[LevelResult, list[RequestTiming], int]:
    check_level(conc)
    prompts, n_out = _level_inputs(params, conc)
    timings, wall, events = _simulate(params, conc, prompts, n_out, max_events)
    return level_metrics(conc, timings, wall, params.slo_ms), timings, events


def simulate_level(
    params: SweepParams, conc: int, max_events: float = MAX_EVENTS
) -> tuple[LevelResult, list[RequestTiming]]:
    """One level of the sweep against a fresh server: ``requests_at_level(conc)`` requests, at
    most ``conc`` in flight. ``timings[i]`` is request i, whose prompt is ``sweep_prompt(i)``."""
    result, timings, _ = _level(params, conc, max_events)
    return result, timings


def run_sweep(params: SweepParams | None = None, max_events: float = MAX_EVENTS) -> SweepResult:
    """Simulate every level, all of them within ``max_events`` events (SweepTooBig past it); each
    level's timings are dropped once its metrics are taken."""
    if params is None:
        params = SweepParams()
    results = []
    left = max_events
    for conc in params.levels:
        result, _, events = _level(params, conc, left)
        results.append(result)
        left -= events
    return SweepResult(params=params, levels=tuple(results), capacity=capacity(results, params.slo_ms))

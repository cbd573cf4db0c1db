"""What a request from the web may ask of the simulator and of real runs, in one place.

The simulated sweeps the web endpoints run (``WEB_LIMITS``), and the real sweeps and
prefix-cache runs a page may start on the shared machine (``BROWSER_LIMITS``,
``PREFIX_CACHE_LIMITS``). The command line has none of these caps. Pure Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from ..core.params import ParamError
from .prefix_cache_run import PREFIX_ORDERS, PrefixCacheSetup
from .prompts import requests_at_level, sweep_prompt_and_length
from .sweep_params import SweepParams

# Work units, one about a heap level's comparison: fitted to bench/bench_model.py's shapes,
# which then cost 43-60 ns of CPU a unit on the development machine (2026-12-01).
EVENT_UNITS = 2  # popping or replacing one event, besides the heap's depth
REQUEST_UNITS = 21  # a request's own cost: its timing record, its metrics (median gap, TTFT)


@lru_cache(maxsize=4096)
def level_events(conc: int, max_tokens: int) -> int:
    """The events the simulator processes for one level: each request's arrival, each of its
    streamed tokens, and its release. Exact: each reply's length is drawn from its prompt."""
    n = requests_at_level(conc)
    return sum(min(sweep_prompt_and_length(i)[1], max_tokens) for i in range(n)) + 2 * n


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

    @property
    def max_events(self) -> int:
        """The events a web sweep may process, counted inside the simulator's loop whatever the
        forecast said: as many as the cap's work buys at the cheapest event (one request in
        flight, EVENT_UNITS + 1 units), so the loop never refuses what the forecast allows."""
        return self.max_work // (EVENT_UNITS + 1)

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


@dataclass(frozen=True)
class BrowserLimits:
    """Real sweeps take real time on a shared machine: keep the ones a page can start short."""

    max_level: int = 64
    max_requests: int = 400
    max_tokens: int = 256

    def check(self, params: SweepParams) -> None:
        if max(params.levels) > self.max_level:
            raise ParamError("levels", f"levels: a sweep from the browser goes up to C = {self.max_level}")
        if params.max_tokens > self.max_tokens:
            raise ParamError(
                "max_tokens", f"max_tokens: a sweep from the browser allows at most {self.max_tokens}"
            )
        total = sum(requests_at_level(conc) for conc in params.levels)
        if total > self.max_requests:
            raise ParamError(
                "levels",
                f"levels: this sweep sends {total} requests; a sweep from the browser sends at most "
                f"{self.max_requests} (run `manage.py sweep --url` for more)",
            )


BROWSER_LIMITS = BrowserLimits()


@dataclass(frozen=True)
class PrefixCacheLimits:
    """A prefix-cache run from the browser: few requests, and done within a couple of minutes
    by the model (the variable-first half prefills the whole prompt on every request)."""

    max_requests: int = 24
    max_seconds: float = 120.0

    def check(self, setup: PrefixCacheSetup) -> None:
        if setup.requests > self.max_requests:
            raise ParamError(
                "requests", f"requests: a run from the browser sends at most {self.max_requests} per order"
            )
        seconds = sum(replace(setup, order=order).expected_seconds() for order in PREFIX_ORDERS)
        if seconds > self.max_seconds:
            raise ParamError(
                "prefix_chars",
                f"this run would take about {seconds:.0f} s on the practice server; a run from the "
                f"browser takes at most {self.max_seconds:.0f} s (use a shorter prompt or fewer "
                "requests, or `manage.py prefix_cache --url` for more)",
            )


PREFIX_CACHE_LIMITS = PrefixCacheLimits()


@dataclass(frozen=True)
class EngineWebLimits:
    """What /sim/engine/ and /sim/engine.json may simulate: at most ``max_requests`` requests and
    ``run_work`` units of work for the run, ``sweep_work`` for the concurrency sweep beside it
    (felab_sim/engine/serving/simulate.py's work units, 0.7–2.4 µs of CPU each here), so that
    the largest page the caps allow stays well within the 250 ms simulation budget
    (`bench/bench_engine_web.py --largest` finds and times that page). The run stops
    at its cap and is refused; a sweep over its cap is left off the page. The bundled trace is
    held to the same cap: the three measured runs' own settings read felab's stored run of them
    (anchor_runs.json, checked against the engine by tests/sim/test_anchor_felab.py), and its
    300 requests at other settings cost about 250,000-300,000 units, so they are refused."""

    max_requests: int = 100
    max_config_chars: int = 20_000  # a pasted config.json; the largest preset's is under 2,000
    # The page's defaults cost 35,945 units for the run and 35,873 for the sweep: both fit.
    run_work: float = 50_000
    sweep_work: float = 36_000
    sample_interval: float = 0.1  # seconds between the page's timeseries samples

    def check(self, values: dict) -> None:
        if values["workload"] != "trace" and int(values["requests"]) > self.max_requests:
            raise ParamError(
                "requests",
                f"requests must be at most {self.max_requests} in a web request (got "
                f"{values['requests']:,}); run `manage.py engine` for more",
            )

    def check_config(self, text: str) -> None:
        if len(text) > self.max_config_chars:
            raise ParamError(
                "model_config",
                f"model_config must be at most {self.max_config_chars:,} characters (got {len(text):,})",
            )


ENGINE_WEB_LIMITS = EngineWebLimits()

"""Benchmark the simulator: the default sweep, and the costliest sweeps the web caps allow.

    python bench/bench_model.py [--runs N]

Budgets: the default sweep in at most 20 ms, anything ``check_web_limits`` accepts in 250 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from felab_sim.core.model import (
    MAX_LEVEL,
    MAX_LEVELS,
    MAX_SLOTS,
    WEB_LIMITS,
    ServerParams,
    SweepParams,
    check_web_limits,
    run_sweep,
)

DEFAULT_BUDGET_MS = 20.0
WEB_BUDGET_MS = 250.0


def median_ms(params: SweepParams, runs: int) -> tuple[float, int]:
    times = []
    tokens = 0
    for _ in range(runs):
        start = time.perf_counter()
        result = run_sweep(params)
        times.append((time.perf_counter() - start) * 1000.0)
        tokens = sum(level.tokens for level in result.levels)
    return statistics.median(times), tokens


def _fill(top: int, max_tokens: int) -> tuple[int, ...]:
    """The highest distinct levels (up to MAX_LEVELS, from ``top`` down) within the token cap."""
    levels: list[int] = []
    for c in range(top, 0, -1):
        if len(levels) == MAX_LEVELS:
            break
        trial = SweepParams(levels=(*levels, c), max_tokens=max_tokens)
        if WEB_LIMITS.tokens_bound(trial) <= WEB_LIMITS.max_tokens_streamed:
            levels.append(c)
    return tuple(sorted(levels))


def web_worst_cases() -> dict[str, SweepParams]:
    """Candidates for the slowest accepted sweep: most tokens, most requests, biggest heaps."""
    wide = ServerParams(slots=MAX_SLOTS)
    narrow = ServerParams(slots=8)
    cases = {
        # Cost per token grows with the heap, i.e. with slots and C in flight.
        "one huge level + fill, 1024 slots": SweepParams(
            levels=_fill(MAX_LEVEL, 200), max_tokens=200, server=wide
        ),
        "twelve levels, 1024 slots": SweepParams(
            levels=_fill(MAX_LEVEL // 12, 200), max_tokens=200, server=wide
        ),
        "one huge level + fill, 8 slots": SweepParams(
            levels=_fill(MAX_LEVEL, 200), max_tokens=200, server=narrow
        ),
        "most requests (max_tokens 1), 1024 slots": SweepParams(
            levels=_fill(MAX_LEVEL, 1), max_tokens=1, server=wide
        ),
        "zero overheads, 1024 slots": SweepParams(
            levels=_fill(MAX_LEVEL, 200),
            max_tokens=200,
            request_overhead_ms=0.0,
            token_overhead_ms=0.0,
            server=ServerParams(slots=MAX_SLOTS, growth=0.0),
        ),
    }
    for params in cases.values():
        check_web_limits(params)  # each must be a sweep the web would accept
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=51, help="runs of the default sweep")
    parser.add_argument("--web-runs", type=int, default=3, help="runs of each web worst case")
    args = parser.parse_args()

    run_sweep()  # warm the prompt cache, as a long-running process would have
    ms, tokens = median_ms(SweepParams(), args.runs)
    ok = ms <= DEFAULT_BUDGET_MS
    print(
        f"default sweep: {ms:.2f} ms median of {args.runs} ({tokens:,} tokens); "
        f"budget {DEFAULT_BUDGET_MS:.0f} ms: {'ok' if ok else 'OVER'}"
    )

    print(f"web caps: {WEB_LIMITS}")
    worst_name, worst_ms = "", 0.0
    for name, params in web_worst_cases().items():
        case_ms, case_tokens = median_ms(params, args.web_runs)
        print(f"  {name}: levels {list(params.levels)}: {case_ms:.0f} ms ({case_tokens:,} tokens)")
        if case_ms > worst_ms:
            worst_name, worst_ms = name, case_ms
    web_ok = worst_ms <= WEB_BUDGET_MS
    print(
        f"web worst case: {worst_ms:.0f} ms ({worst_name}); "
        f"budget {WEB_BUDGET_MS:.0f} ms: {'ok' if web_ok else 'OVER'}"
    )
    return 0 if ok and web_ok else 1


if __name__ == "__main__":
    sys.exit(main())

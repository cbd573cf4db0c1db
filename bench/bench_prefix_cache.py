"""Benchmark lesson 06's prefix-cache run against the practice server, beside the calculator.

    .venv/bin/python bench/bench_prefix_cache.py [--requests 12] [--prefix-chars 12120 --suffix-chars 80]

Starts ``manage.py practice_server`` in its own process (as bench_practice.py does), measures
the run with felab_sim.engine.sweep.prefix_cache_run (shared part first, then variable part first, each with a
prefix no earlier run sent) and prints it beside the ``prefix-cache`` calculator's outputs for
the same parameters. Targets: cached tokens exactly the calculator's; cold TTFT within 5 %;
warm TTFT within 5 ms (a ~32 ms number, to which each request's HTTP adds a few ms that the
calculator leaves out, as lesson 03's TTFT at C = 1 shows).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_practice import pct, practice_server, verdict  # noqa: E402
from felab_sim.engine.calculators import CALCULATORS  # noqa: E402
from felab_sim.engine.sweep.prefix_cache_run import PREFIX_ORDERS, PrefixCacheSetup, run_prefix_cache  # noqa: E402

COLD_TARGET = 0.05
WARM_TARGET_MS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = PrefixCacheSetup()
    parser.add_argument("--requests", type=int, default=defaults.requests)
    parser.add_argument("--prefix-chars", type=int, default=defaults.prefix_chars)
    parser.add_argument("--suffix-chars", type=int, default=defaults.suffix_chars)
    args = parser.parse_args()

    calculator = CALCULATORS["prefix-cache"]
    print(
        f"Prefix-cache run vs the prefix-cache calculator: {args.prefix_chars} shared + "
        f"{args.suffix_chars} varying characters, {args.requests} requests per order"
    )
    header = f"  {'order':<15} {'metric':<14} {'measured':>9} {'model':>9} {'diff':>8}  target"
    print(header)
    all_ok = True
    with practice_server() as (url, _pid):
        for order in PREFIX_ORDERS:
            setup = PrefixCacheSetup(
                prefix_chars=args.prefix_chars,
                suffix_chars=args.suffix_chars,
                order=order,
                requests=args.requests,
            )
            started = time.perf_counter()
            run = run_prefix_cache(url, setup)
            took = time.perf_counter() - started
            model = calculator.run(
                {"prefix_chars": setup.prefix_chars, "suffix_chars": setup.suffix_chars, "order": order}
            )
            rows = [
                (
                    "cached_tokens",
                    run.cached_tokens,
                    model.value("cached_tokens"),
                    run.cached_tokens == model.value("cached_tokens"),
                    "exact",
                ),
                (
                    "ttft_cold_ms",
                    run.ttft_cold_ms,
                    model.value("ttft_cold_ms"),
                    abs(pct(run.ttft_cold_ms, model.value("ttft_cold_ms"))) <= COLD_TARGET * 100,
                    f"±{COLD_TARGET * 100:g}%",
                ),
                (
                    "ttft_warm_ms",
                    run.ttft_warm_ms,
                    model.value("ttft_warm_ms"),
                    abs(run.ttft_warm_ms - model.value("ttft_warm_ms")) <= WARM_TARGET_MS
                    if order == "shared-first"
                    else abs(pct(run.ttft_warm_ms, model.value("ttft_warm_ms"))) <= COLD_TARGET * 100,
                    f"±{WARM_TARGET_MS:g} ms" if order == "shared-first" else f"±{COLD_TARGET * 100:g}%",
                ),
                ("speedup", run.speedup, model.value("speedup"), True, ""),
            ]
            for name, measured, predicted, ok, target in rows:
                all_ok &= ok
                diff = f"{pct(measured, predicted):+.1f}%" if predicted else ""
                print(
                    f"  {order:<15} {name:<14} {measured:>9.1f} {predicted:>9.1f} {diff:>8}  "
                    f"{target} {verdict(ok) if target else ''}".rstrip()
                )
            print(f"  ({order}: {took:.1f} s)")
    print("all targets met" if all_ok else "some targets MISSED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark the simulator: the default sweep, and the costliest sweeps the web caps allow.

    python bench/bench_model.py [--runs N]

Budgets: the default sweep in at most 20 ms, anything ``check_web_limits`` accepts in 250 ms.
``--pages`` also times sweep.json and /sim/ for the slowest case, in-process (Django's test
client on a scratch database).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.sweep.limits import WEB_LIMITS, check_web_limits
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import MAX_LEVEL, MAX_LEVELS, MAX_SLOTS, ServerParams, SweepParams

DEFAULT_BUDGET_MS = 20.0
WEB_BUDGET_MS = 250.0
ISSUE_18 = "1024,1000,999,998,997,996,995,994,993,992,991,990"  # max_tokens 11, 1024 slots


def median_ms(params: SweepParams, runs: int) -> tuple[float, float, int]:
    """Median wall and CPU milliseconds of simulating ``params``, and the events it processed.
    CPU time is this process's alone: on a shared machine it is the steadier of the two."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        run_sweep(params)
        wall.append((time.perf_counter() - start) * 1000.0)
        cpu.append((time.process_time() - start_cpu) * 1000.0)
    return statistics.median(wall), statistics.median(cpu), WEB_LIMITS.events(params)


def _fill(top: int, max_tokens: int, slots: int) -> SweepParams:
    """The highest distinct levels (up to MAX_LEVELS, from ``top`` down) within the web cap."""
    server = ServerParams(slots=slots)
    levels: list[int] = []
    for c in range(top, 0, -1):
        if len(levels) == MAX_LEVELS:
            break
        trial = SweepParams(levels=(*levels, c), max_tokens=max_tokens, server=server)
        if WEB_LIMITS.work(trial) <= WEB_LIMITS.max_work:
            levels.append(c)
    return SweepParams(levels=tuple(sorted(levels)), max_tokens=max_tokens, server=server)


def _longest_replies(levels: tuple[int, ...], slots: int) -> SweepParams | None:
    """These levels with the largest max_tokens the web cap accepts; None if even 1 is too much."""
    server = ServerParams(slots=slots)
    best = None
    for max_tokens in range(1, 201):
        trial = SweepParams(levels=levels, max_tokens=max_tokens, server=server)
        if WEB_LIMITS.work(trial) > WEB_LIMITS.max_work:
            break
        best = trial
    return best


def web_worst_cases() -> dict[str, SweepParams]:
    """Candidates for the slowest accepted sweep, each filled up to the web cap: long and short
    replies (events against requests), narrow and wide servers (the heap's depth), many levels
    near the top (issue 18's shape), and no overheads (every request in step)."""
    cases: dict[str, SweepParams] = {}
    for slots in (8, 64, MAX_SLOTS):
        for max_tokens in (1, 11, 50, 128, 200):
            cases[f"highest levels, max_tokens {max_tokens}, {slots} slots"] = _fill(
                MAX_LEVEL, max_tokens, slots
            )
        top = tuple(range(MAX_LEVEL - MAX_LEVELS + 1, MAX_LEVEL + 1))
        if (longest := _longest_replies(top, slots)) is not None:
            cases[f"twelve levels at the top, {slots} slots"] = longest
    cases["zero overheads, 1024 slots"] = replace(
        _fill(MAX_LEVEL, 200, MAX_SLOTS), request_overhead_ms=0.0, token_overhead_ms=0.0
    )
    for params in cases.values():
        check_web_limits(params)  # each must be a sweep the web would accept
    return cases


def pages_for(params: SweepParams, runs: int) -> list[tuple[float, float]]:
    """Median in-process wall and CPU milliseconds of sweep.json and /sim/ for ``params``, simulated anew
    each time (a new SLO: a new cache key, the same simulation), on a scratch database."""
    import os
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="felab-bench-model-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client, override_settings

    from felab_sim.live import sim_query

    call_command("migrate", verbosity=0)
    # No rate limit (one client asking many times), and static files read from their sources.
    override_settings(
        RATE_LIMITS={"login": (0, 60), "sweep": (0, 60), "write": (0, 60), "learner-write": (0, 60)},
        STORAGES={
            **settings.STORAGES,
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        },
    ).enable()
    client = Client()
    medians = []
    for path in ("/sim/sweep.json", "/sim/"):
        wall, cpu = [], []
        for index in range(runs):
            query = sim_query(replace(params, slo_ms=500.0 + (index + 1) / 1000 + len(path)))
            start, start_cpu = time.perf_counter(), time.process_time()
            response = client.get(f"{path}?{query}")
            wall.append((time.perf_counter() - start) * 1000.0)
            cpu.append((time.process_time() - start_cpu) * 1000.0)
            assert response.status_code == 200, (path, response.status_code, response.content[:300])
        medians.append((statistics.median(wall), statistics.median(cpu)))
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=51, help="runs of the default sweep")
    parser.add_argument("--web-runs", type=int, default=3, help="runs of each web worst case")
    parser.add_argument(
        "--pages", action="store_true", help="also time sweep.json and /sim/ for the worst case"
    )
    args = parser.parse_args()

    run_sweep()  # warm the prompt cache, as a long-running process would have
    ms, cpu_ms, events = median_ms(SweepParams(), args.runs)
    ok = ms <= DEFAULT_BUDGET_MS
    print(
        f"default sweep: {ms:.2f} ms median of {args.runs} ({cpu_ms:.2f} ms CPU; {events:,} events, "
        f"{WEB_LIMITS.work(SweepParams()):,} units of work); budget {DEFAULT_BUDGET_MS:.0f} ms: "
        f"{'ok' if ok else 'OVER'}"
    )

    print(f"web caps: {WEB_LIMITS}")
    worst_name, worst = "", (0.0, 0.0)
    worst_params = SweepParams()
    for name, params in web_worst_cases().items():
        case_ms, case_cpu, case_events = median_ms(params, args.web_runs)
        work = WEB_LIMITS.work(params)
        print(
            f"  {name}: levels {','.join(map(str, params.levels))}, max_tokens {params.max_tokens}: "
            f"{case_ms:.0f} ms ({case_cpu:.0f} ms CPU; {case_events:,} events, {work:,} units, "
            f"{case_cpu * 1e6 / work:.0f} ns CPU a unit)"
        )
        if case_cpu > worst[1]:
            worst_name, worst, worst_params = name, (case_ms, case_cpu), params
    web_ok = worst[1] <= WEB_BUDGET_MS
    print(
        f"web worst case: {worst[0]:.0f} ms, {worst[1]:.0f} ms CPU ({worst_name}); "
        f"budget {WEB_BUDGET_MS:.0f} ms: {'ok' if web_ok else 'OVER'}"
    )
    issue = SweepParams.from_flat({"levels": ISSUE_18, "max_tokens": 11, "slots": MAX_SLOTS})
    print(f"issue 18's sweep ({WEB_LIMITS.work(issue):,} units): ", end="")
    try:
        check_web_limits(issue)
        print("accepted")
    except ParamError:
        print("refused")
    if args.pages:
        (json_ms, json_cpu), (page_ms, page_cpu) = pages_for(worst_params, args.web_runs)
        print(
            f"worst case in-process (median of {args.web_runs}): sweep.json {json_ms:.0f} ms "
            f"({json_cpu:.0f} ms CPU), /sim/ {page_ms:.0f} ms ({page_cpu:.0f} ms CPU)"
        )
    return 0 if ok and web_ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""What the /sim/engine/ page's runs cost: CPU time against the engine's work units.

    .venv/bin/python bench/bench_engine_web.py [--fit | --pages | --largest | --curve]

Per kind of run the page allows (at its caps: 100 requests; felab_sim/engine/sweep/limits.py) it prints
the run's and the sweep's CPU time (best of three), their work units, and µs a unit; the caps
hold when every run's and sweep's time at its cap stays within the 250 ms budget together.
``--fit`` solves, by least squares, for the cost of a replica's step, a scheduled request and a
block of prompt tokens, the three weights of simulate.py's ``_step_work``. ``--pages`` times the
whole /sim/engine/ page per case, cold (the process's cache of runs emptied) and warm, in-process
with Django's test client on a scratch SQLite database, and the three measured runs' pages (read
from anchor_runs.json's stored runs, not simulated). ``--largest`` finds, per costly kind of run,
the most requests the caps let through (the run just under ``run_work``, its sweep up to
``sweep_work``) and prints that page's cold CPU time against the 250 ms budget: on a shared
machine the ratio to the budget is what carries over, not the milliseconds. ``--curve`` times the
planner's curve (felab_sim/engine/serving/planner.py) per kind of model and lengths: its CPU time (best of
three) within its own budget of work units, the levels it reached, and its ratio to the 250 ms.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from felab_sim.engine.serving import simulate as engine  # noqa: E402
from felab_sim.engine.serving.engine_params import (  # noqa: E402
    engine_inputs,
    parse_engine_values,
    run_engine,
    sweep_engine,
    sweep_requests,
)
from felab_sim.engine.sweep.limits import ENGINE_WEB_LIMITS  # noqa: E402

CASES: tuple[dict[str, object], ...] = (
    {},
    {"max_num_seqs": 8},
    {"max_num_seqs": 1, "output_tokens": 100},
    {"input_tokens": 8192, "rate": 2},
    {"data_parallel": 8},
    {"rate": 1},
    {"input_tokens": 4096, "output_tokens": 32},
    {"data_parallel": 4, "max_num_seqs": 2},
    {"workload": "concurrency", "concurrency": 64},
    {"model": "Qwen3-30B-A3B", "hardware": "rtx-pro-6000", "data_parallel": 2, "expert_parallel": True},
)


def best_of(runs: int, work) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(runs):
        start = time.process_time()
        try:
            value = work()
        except engine.WorkBudgetExceeded as error:
            value = error
        best = min(best, time.process_time() - start)
    return best, value


def table() -> None:
    limits = ENGINE_WEB_LIMITS
    print(
        f"caps: {limits.max_requests} requests, run {limits.run_work:,.0f} units, sweep {limits.sweep_work:,.0f}"
    )
    print(f"{'settings':58} {'run ms':>7} {'units':>8} {'µs/u':>5} {'sweep ms':>8} {'units':>8} {'µs/u':>5}")
    worst = 0.0
    for case in CASES:
        inputs = engine_inputs(parse_engine_values(case))
        run_s, result = best_of(
            3, lambda inputs=inputs: run_engine(inputs, limits.sample_interval, work_budget=limits.run_work)
        )
        run_work = limits.run_work if isinstance(result, Exception) else result.work
        sweep_s, _ = best_of(3, lambda inputs=inputs: sweep_engine(inputs, work_budget=limits.sweep_work))
        sweep_work = sum(
            engine.simulate(
                [
                    engine.TraceRequest(
                        0, inputs.trace[0].prompt_tokens, min(inputs.trace[0].output_tokens, 128)
                    )
                ],
                inputs.shape,
                inputs.hardware,
                inputs.settings,
                closed_loop=engine.ClosedLoop(c, sweep_requests(c)),
            ).work
            for c in (1, 2, 4, 8, 16, 32)
        )
        shown = min(sweep_work, limits.sweep_work)
        worst = max(worst, run_s + sweep_s)
        label = ", ".join(f"{k}={v}" for k, v in case.items()) or "defaults"
        print(
            f"{label[:58]:58} {run_s * 1000:7.0f} {run_work:8,.0f} {run_s * 1e6 / run_work:5.2f}"
            f" {sweep_s * 1000:8.0f} {shown:8,.0f} {sweep_s * 1e6 / shown:5.2f}"
            + ("  (run over its cap)" if isinstance(result, Exception) else "")
            + ("  (sweep over its cap)" if sweep_work > limits.sweep_work else "")
        )
    print(f"worst run + sweep: {worst * 1000:.0f} ms (budget 250 ms)")


BUDGET_MS = 250.0
# The measured runs' settings (their stored runs are read), and a trace at other settings (refused).
ANCHOR_CASES: tuple[dict[str, object], ...] = (
    {"workload": "trace"},
    {"workload": "trace", "hardware": "rtx-pro-6000", "max_num_seqs": 128},
    {
        "workload": "trace",
        "model": "Qwen3-30B-A3B",
        "hardware": "rtx-pro-6000",
        "max_num_seqs": 128,
        "data_parallel": 2,
        "expert_parallel": True,
    },
    {"workload": "trace", "max_num_seqs": 64},
)
# The kinds of run that cost the most CPU a unit (table()'s µs/u): where the caps must hold.
COSTLY: tuple[dict[str, object], ...] = (
    {"max_num_seqs": 1, "output_tokens": 100},
    {"rate": 1},
    {"max_num_seqs": 8},
    {"input_tokens": 8192, "rate": 2},
    {"data_parallel": 4, "max_num_seqs": 2},
    {"model": "Qwen3-30B-A3B", "hardware": "rtx-pro-6000", "data_parallel": 2, "expert_parallel": True},
)


def page_client():
    """Django's test client on a scratch database, static files served plainly, imports warm."""
    import os
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="felab-bench-engine-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
    os.environ["FELAB_SWEEP_LIMIT"] = "0"  # no rate limit: this is one client asking many times
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings

    call_command("migrate", verbosity=0)
    plain = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    override_settings(STORAGES=plain).enable()
    logging.getLogger("django.request").setLevel(logging.ERROR)  # the refusals are expected
    client = Client()
    client.get("/sim/engine/")  # imports, templates
    return client


def time_page(client, case: dict[str, object]) -> tuple[int, float, float, float]:
    """Status, cold wall and CPU seconds (the process's cache of runs emptied), warm wall: best of 3."""
    from urllib.parse import urlencode

    from felab_sim.live import engine_curve, engine_outcomes

    url = "/sim/engine/?" + urlencode(case)
    colds, cpus, warms = [], [], []
    for _ in range(3):
        engine_outcomes.cache_clear()
        engine_curve.cache_clear()
        start, cpu = time.perf_counter(), time.process_time()
        status = client.get(url).status_code
        colds.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        start = time.perf_counter()
        client.get(url)
        warms.append(time.perf_counter() - start)
    return status, min(colds), min(cpus), min(warms)


def label_of(case: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in case.items()) or "defaults"


def pages() -> None:
    client = page_client()
    print(f"{'settings':58} {'status':>6} {'cold ms':>8} {'cold CPU':>8} {'warm ms':>8}")
    for case in CASES + ANCHOR_CASES:
        status, cold, cpu, warm = time_page(client, case)
        print(f"{label_of(case)[:58]:58} {status:6} {cold * 1000:8.0f} {cpu * 1000:8.0f} {warm * 1000:8.0f}")


def fits(case: dict[str, object]) -> bool:
    inputs = engine_inputs(parse_engine_values(case))
    try:
        run_engine(inputs, ENGINE_WEB_LIMITS.sample_interval, work_budget=ENGINE_WEB_LIMITS.run_work)
    except engine.WorkBudgetExceeded:
        return False
    return True


def largest_allowed(case: dict[str, object]) -> dict[str, object]:
    """The case with the most requests (up to the cap on requests) whose run fits run_work."""
    low, high = 1, ENGINE_WEB_LIMITS.max_requests
    if fits({**case, "requests": high}):
        return {**case, "requests": high}
    while low < high:  # the largest count that fits: work grows with the requests
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits({**case, "requests": middle}) else (low, middle - 1)
    return {**case, "requests": low}


def largest() -> None:
    limits = ENGINE_WEB_LIMITS
    print(
        f"caps: {limits.max_requests} requests, run {limits.run_work:,.0f} units, sweep {limits.sweep_work:,.0f};"
        f" budget {BUDGET_MS:.0f} ms of CPU"
    )
    client = page_client()
    print(
        f"{'the largest run the caps allow':58} {'status':>6} {'sim CPU':>8} {'page CPU':>8} {'÷ budget':>8}"
    )
    worst = 0.0
    for kind in COSTLY:
        case = largest_allowed(kind)
        inputs = engine_inputs(parse_engine_values(case))

        def simulation(inputs=inputs) -> None:
            run_engine(inputs, limits.sample_interval, work_budget=limits.run_work)
            sweep_engine(inputs, work_budget=limits.sweep_work)  # over its cap: best_of catches it

        sim_s, _ = best_of(3, simulation)
        status, _, cpu, _ = time_page(client, case)
        worst = max(worst, cpu)
        print(
            f"{label_of(case)[:58]:58} {status:6} {sim_s * 1000:8.0f} {cpu * 1000:8.0f} {cpu * 1000 / BUDGET_MS:8.2f}"
        )
    print(
        f"worst cold page: {worst * 1000:.0f} ms of CPU, {worst * 1000 / BUDGET_MS:.2f} of the {BUDGET_MS:.0f} ms budget"
    )


CURVE_CASES: tuple[dict[str, object], ...] = (
    {},
    {
        "model": "Llama-3.1-8B",
        "hardware": "h200",
        "precision": "bf16",
        "input_tokens": 1024,
        "output_tokens": 1024,
    },
    {
        "model": "Llama-3.1-8B",
        "hardware": "h200",
        "precision": "bf16",
        "input_tokens": 8192,
        "output_tokens": 1024,
    },
    {
        "model": "DeepSeek-V3",
        "hardware": "h200",
        "tensor_parallel": 8,
        "input_tokens": 1024,
        "output_tokens": 1024,
    },
    {"model": "Qwen3-30B-A3B", "hardware": "h100-sxm", "input_tokens": 1024, "output_tokens": 128},
)
PAGE_BUDGET_S = 0.25


def curve() -> None:
    from felab_sim.engine.serving.planner import WEB_CURVE_WORK, simulate_curve

    print(f"the web's curve budget: {WEB_CURVE_WORK:,.0f} units, C = 1 … 256")
    print(f"{'settings':70} {'CPU ms':>7} {'units':>8} {'µs/u':>5} {'reached':>7} {'÷ 250 ms':>8}")
    for case in CURVE_CASES:
        values = parse_engine_values(case)
        inputs = engine_inputs(values)
        lengths = int(values["input_tokens"]), int(values["output_tokens"])
        seconds, found = best_of(
            3, lambda inputs=inputs, lengths=lengths: simulate_curve(inputs, 256, *lengths, WEB_CURVE_WORK)
        )
        reached = found.levels[-1].concurrency if found.levels else 0
        print(
            f"{label_of(case)[:70]:70} {seconds * 1000:7.0f} {found.work:8,.0f} "
            f"{seconds * 1e6 / max(found.work, 1):5.2f} {reached:7} {seconds / PAGE_BUDGET_S:8.2f}"
        )


def fit() -> None:
    counted = {"steps": 0.0, "items": 0.0, "blocks": 0.0}
    original = engine._step_work

    def counting(batches, block_size):
        counted["steps"] += len(batches)
        counted["items"] += sum(len(batch) for batch in batches)
        counted["blocks"] += sum(item.tokens for batch in batches for item in batch) / block_size
        return original(batches, block_size)

    engine._step_work = counting
    rows = []
    for case in CASES:
        inputs = engine_inputs(parse_engine_values(case))
        counted.update(steps=0.0, items=0.0, blocks=0.0)
        run_engine(inputs, ENGINE_WEB_LIMITS.sample_interval)
        counts = dict(counted)
        seconds, _ = best_of(3, lambda inputs=inputs: run_engine(inputs, ENGINE_WEB_LIMITS.sample_interval))
        rows.append(([counts["steps"], counts["items"], counts["blocks"]], seconds * 1e6))
    engine._step_work = original
    # Normal equations for three unknowns, without numpy.
    a = [[sum(x[i] * x[j] for x, _ in rows) for j in range(3)] for i in range(3)]
    b = [sum(x[i] * y for x, y in rows) for i in range(3)]
    for i in range(3):
        for k in range(i + 1, 3):
            factor = a[k][i] / a[i][i]
            a[k] = [p - factor * q for p, q in zip(a[k], a[i], strict=True)]
            b[k] -= factor * b[i]
    coef = [0.0, 0.0, 0.0]
    for i in reversed(range(3)):
        coef[i] = (b[i] - sum(a[i][j] * coef[j] for j in range(i + 1, 3))) / a[i][i]
    step, item, block = coef
    print(f"µs: a replica's step {step:.2f}, a scheduled request {item:.2f}, a block of prompt {block:.2f}")
    print(f"in units of a request: step {step / item:.1f}, block {block / item:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit the work units' weights")
    parser.add_argument("--pages", action="store_true", help="time the whole page, cold and warm")
    parser.add_argument(
        "--largest", action="store_true", help="the cold page of the largest run the caps allow"
    )
    parser.add_argument("--curve", action="store_true", help="the planner's curve within its budget")
    options = parser.parse_args()
    if options.curve:
        curve()
    elif options.fit:
        fit()
    elif options.largest:
        largest()
    elif options.pages:
        pages()
    else:
        table()

"""Benchmark the calculators: each one's JSON in-process, each page against the card page, and
the default sweep, in one run.

    python bench/bench_calc.py [--runs N]

Targets (issue 11): a calculator's JSON in at most 5 ms in-process; each calculator page no slower
than the card page; the default sweep in at most 20 ms. Issue 21: the chain's JSON (/sim/chain.json)
in at most 5 ms in-process, and the chain page (/sim/chain/) no slower than a calculator page (the
roofline's, the chain's heaviest step, at the chain's decode settings). Each row also shows the course's worked
example and what felab computes for it. In-process (Django's test client on a scratch SQLite
database with the bundled lessons): compare the numbers within the table, as ratios.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCRATCH = Path(tempfile.mkdtemp(prefix="felab-bench-calc-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{SCRATCH / 'bench.sqlite3'}"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from felab_sim.engine.calculators import CALCULATORS  # noqa: E402
from felab_sim.engine.course import chain  # noqa: E402
from felab_sim.engine.sweep.simulator import run_sweep  # noqa: E402
from felab_sim.engine.sweep.sweep_params import SweepParams  # noqa: E402
from felab_sim.pages.chain_views import step_url  # noqa: E402

CARD = "/learn/llm-inference-performance/concurrency-sweep/step-1/?answer=shown"
JSON_BUDGET_MS = 5.0
SWEEP_BUDGET_MS = 20.0


def median_ms(action: Callable[[], object], runs: int) -> float:
    action()  # warm: imports, caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def get_ok(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=51)
    runs = parser.parse_args().runs

    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0, stdout=io.StringIO())
    # Static URLs without collectstatic's manifest: the pages' HTML is what is timed here.
    plain = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=plain):
        measure(runs)


def measure(runs: int) -> None:
    client = Client()
    card_ms = median_ms(lambda: get_ok(client, CARD), runs)
    sweep_ms = median_ms(lambda: run_sweep(SweepParams()), runs)

    print(f"bench_calc: median of {runs}; card page {card_ms:.1f} ms; default sweep {sweep_ms:.1f} ms")
    header = ("calculator", "worked example", "felab", "JSON ms", "endpoint ms", "page ms", "÷ card")
    rows = []
    over = []
    for name, calculator in CALCULATORS.items():
        # Each calculator's first worked example (felab_sim/engine/calculators/NAME.py).
        example = calculator.examples[0]
        query, key = example.params, example.output
        shown = calculator.run(query).outputs[key].text()
        json_ms = median_ms(lambda c=calculator, q=query: json.dumps(c.run(q).as_json()), runs)
        endpoint_ms = median_ms(
            lambda n=name, q=query: get_ok(client, f"/sim/calc/{n}.json?{urlencode(q)}"), runs
        )
        page_ms = median_ms(lambda n=name, q=query: get_ok(client, f"/sim/calc/{n}/?{urlencode(q)}"), runs)
        rows.append(
            (
                name,
                example.what,
                f"{key} = {shown}",
                f"{json_ms:.3f}",
                f"{endpoint_ms:.2f}",
                f"{page_ms:.2f}",
                f"{page_ms / card_ms:.2f}",
            )
        )
        if json_ms > JSON_BUDGET_MS:
            over.append(f"{name} JSON {json_ms:.2f} ms > {JSON_BUDGET_MS} ms")
        if page_ms > card_ms:
            over.append(f"{name} page {page_ms:.1f} ms > card {card_ms:.1f} ms")
    over += measure_chain(client, runs)
    if sweep_ms > SWEEP_BUDGET_MS:
        over.append(f"default sweep {sweep_ms:.1f} ms > {SWEEP_BUDGET_MS} ms")

    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)))
    print("JSON ms: the calculator's JSON in-process (validate, compute, serialise); endpoint ms: GET")
    print("/sim/calc/NAME.json through Django; page ms: GET /sim/calc/NAME/ (chart cached after the first).")
    if over:
        print("OVER TARGET: " + "; ".join(over))
        sys.exit(1)
    print("all targets met")


def measure_chain(client: Client, runs: int) -> list[str]:
    """The chain at the capstone's defaults, beside the calculator page of its decode step."""
    walked = chain.walk({})
    json_ms = median_ms(lambda: json.dumps(chain.walk({}).as_json(step_url)), runs)
    endpoint_ms = median_ms(lambda: get_ok(client, "/sim/chain.json"), runs)
    page_ms = median_ms(lambda: get_ok(client, "/sim/chain/"), runs)
    roofline = step_url(walked.step("decode")).split("#")[0]
    calc_ms = median_ms(lambda: get_ok(client, roofline), runs)
    print(
        f"chain (capstone default, {len(walked.steps)} steps): JSON {json_ms:.3f} ms in-process "
        f"(target ≤ {JSON_BUDGET_MS} ms); chain.json {endpoint_ms:.2f} ms; page {page_ms:.2f} ms against "
        f"the roofline page at its decode step {calc_ms:.2f} ms: ÷ {page_ms / calc_ms:.2f} "
        "(target: no slower than a calculator page, ≤ 1)"
    )
    over = []
    if json_ms > JSON_BUDGET_MS:
        over.append(f"chain JSON {json_ms:.2f} ms > {JSON_BUDGET_MS} ms")
    if page_ms > calc_ms:
        over.append(f"chain page {page_ms:.1f} ms > calculator page {calc_ms:.1f} ms")
    return over


if __name__ == "__main__":
    main()

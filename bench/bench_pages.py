"""Page costs in one run: response times as ratios, SQL queries, and page weights.

    python bench/bench_pages.py [--runs N]

In-process (Django's test client on a scratch SQLite database with the bundled lessons), so
the numbers compare views with each other, not with a network: report the ratios.
- /sim/sweep.json against the card page, cached (same parameters) and uncached (new ones);
- SQL queries per page;
- page weight: each page's HTML plus the static files it loads, gzip-compressed as WhiteNoise
  serves them (after collectstatic, each file has a .gz twin).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCRATCH = Path(tempfile.mkdtemp(prefix="felab-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{SCRATCH / 'bench.sqlite3'}"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

CARD = "/learn/llm-inference-performance/concurrency-sweep/step-1/?answer=shown"
PAGES = {"/": "/", "card (answer shown)": CARD, "/sim/": "/sim/"}
# Issue 14: pages with charts stay under 450 KB compressed; pages without load no plotting code.
PLOTTED = {"card (answer shown)", "/sim/"}
WEIGHT_LIMIT = 450_000
ASSET = re.compile(r'(?:src|href|data-plotly-src)="(/static/[^"]+)"')


def timed(client: Client, url: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times) * 1000


def queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    return len(captured)


def assets(html: bytes) -> list[str]:
    """The static files a page loads, or fetches when a student reaches for a chart."""
    return sorted(set(ASSET.findall(html.decode())))


def page_weight(client: Client, url: str) -> tuple[int, int]:
    """(bytes gzip-compressed, bytes raw) of the HTML and every static file it loads."""
    html = client.get(url).content
    compressed, raw = len(gzip.compress(html, 9)), len(html)
    for asset in assets(html):
        path = Path(settings.STATIC_ROOT) / asset.removeprefix("/static/")
        data = path.read_bytes()
        gz = path.with_name(path.name + ".gz")
        compressed += len(gz.read_bytes()) if gz.exists() else len(gzip.compress(data, 9))
        raw += len(data)
    return compressed, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs

    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    client = Client()

    card_ms = timed(client, CARD, runs)
    json_cached_ms = timed(client, "/sim/sweep.json", runs)
    uncached = []
    for index in range(runs):  # a new step time each time: the simulation runs for real
        start = time.perf_counter()
        client.get(f"/sim/sweep.json?step_ms={18 + index / 1000:.3f}")
        uncached.append(time.perf_counter() - start)
    json_uncached_ms = statistics.median(uncached) * 1000

    print(f"runs per timing: {runs}, in-process, median")
    print(f"card page (answer shown, live panel): {card_ms:.2f} ms = 1.00")
    print(
        f"/sim/sweep.json, cached parameters:   {json_cached_ms:.2f} ms = {json_cached_ms / card_ms:.2f} x card"
    )
    print(
        f"/sim/sweep.json, new parameters:      {json_uncached_ms:.2f} ms = {json_uncached_ms / card_ms:.2f} x card"
    )
    print()
    print("SQL queries per page:")
    for name, url in PAGES.items():
        print(f"  {name:<22} {queries(client, url)}")
    print()
    print("page weight (HTML + static files it loads; gzip as served / raw):")
    verdicts = []
    for name, url in PAGES.items():
        compressed, raw = page_weight(client, url)
        print(f"  {name:<22} {compressed / 1024:8.1f} KiB / {raw / 1024:8.1f} KiB")
        if name in PLOTTED:
            verdicts.append((f"{name} under {WEIGHT_LIMIT:,} bytes compressed", compressed < WEIGHT_LIMIT))
        else:
            plotting = [asset for asset in assets(client.get(url).content) if "plot" in asset]
            verdicts.append((f"{name} loads no plotting code", not plotting))
    for target, met in verdicts:
        print(f"target: {target}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()

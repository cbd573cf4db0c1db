"""Requests per second and latency under wrk, against gunicorn with production settings.

    python bench/bench_http.py [--seconds 10] [--connections 16]

Starts `gunicorn --config config/gunicorn.conf.py` on a free port with a scratch SQLite
database holding the bundled lessons (bench/site.py), then runs wrk (Debian's package) on each page. The
machine is shared and noisy, so each page is reported as a ratio to a trivial Django view
(/healthz) measured in the same run.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.site import running_site, scratch_database

PAGES = {
    "trivial view (/healthz)": "/healthz",
    "card page (answer shown)": "/learn/llm-inference-performance/concurrency-sweep/step-1/?answer=shown",
    "/sim/ (default parameters)": "/sim/",
    "/sim/sweep.json (default)": "/sim/sweep.json",
}


def to_ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def wrk(url: str, seconds: int, connections: int) -> tuple[float, float, float, int]:
    """(requests/s, p50 ms, p99 ms, non-2xx/3xx responses)."""
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
    p50 = to_ms(re.search(r"\s50%\s+(\S+)", out)[1])
    p99 = to_ms(re.search(r"\s99%\s+(\S+)", out)[1])
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, p50, p99, int(bad[1]) if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is missing: apt-get install -y wrk (make bench does it)")

    rows = []
    with running_site(scratch_database("sqlite")) as site:
        for name, path in PAGES.items():
            url = site.url + path
            urllib.request.urlopen(url, timeout=10).read()  # warm caches
            rows.append((name, *wrk(url, args.seconds, args.connections)))

    base = rows[0][1]
    print(f"wrk -t2 -c{args.connections} -d{args.seconds}s against gunicorn (production settings, SQLite)")
    print(f"{'page':<30} {'req/s':>9} {'ratio':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for name, rps, p50, p99, bad in rows:
        print(f"{name:<30} {rps:>9.1f} {rps / base:>7.2f} {p50:>8.2f} {p99:>8.2f} {bad:>7}")


if __name__ == "__main__":
    main()

"""The home page while a client floods /sim/ with uncached heavy sweeps, with and without the
simulation permits (felab_sim/pages/permits.py). Target: the home page's p50 at most 2x its quiet p50.

One gunicorn host, production settings, the sweep rate limit on (120 a minute per address);
the flooder keeps 5 requests in flight, each a sweep no one asked for before (a new SLO each
time, so no cache helps), near the web cap.

    python bench/bench_flood.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.site import running_site, scratch_database

HEAVY = "/sim/?levels={levels}&slots=1024&max_tokens=200&slo_ms={slo}"
LEVELS = "420,32"  # near the web cap: 1.89 of its 2 million units of work


def home_p50(url: str, seconds: float) -> float:
    times = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        start = time.perf_counter()
        urllib.request.urlopen(f"{url}/", timeout=60).read()
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(0.05)
    return statistics.median(times)


def flood(url: str, stop: threading.Event, statuses: Counter, lock: threading.Lock, offset: int) -> None:
    count = 0
    while not stop.is_set():
        count += 1
        slo = 100_000 + offset * 100_000 + count  # unique: never cached
        try:
            status = urllib.request.urlopen(url + HEAVY.format(levels=LEVELS, slo=slo), timeout=60).status
        except urllib.error.HTTPError as error:
            status = error.code
        except OSError:
            status = 0
        with lock:
            statuses[status] += 1
        if status == 429:
            time.sleep(0.5)


def measure(permits: str, seconds: float) -> tuple[float, float, Counter]:
    statuses: Counter = Counter()
    # The other benchmarks turn the rate limits off; this one floods at the limit.
    extra = {"FELAB_SWEEP_LIMIT": "120", "FELAB_SIM_PERMITS": permits}
    with running_site(scratch_database("sqlite"), workers=5, extra_env=extra) as site:
        urllib.request.urlopen(f"{site.url}/", timeout=60).read()
        quiet = home_p50(site.url, seconds)
        stop, lock = threading.Event(), threading.Lock()
        flooders = [
            threading.Thread(target=flood, args=(site.url, stop, statuses, lock, i), daemon=True)
            for i in range(5)
        ]
        for thread in flooders:
            thread.start()
        time.sleep(1.0)
        flooded = home_p50(site.url, seconds)
        stop.set()
        for thread in flooders:
            thread.join(timeout=120)
    return quiet, flooded, statuses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    print("| simulation permits | home p50 quiet ms | home p50 flooded ms | ratio | flood answers |")
    print("| --- | ---: | ---: | ---: | --- |")
    ok = True
    for label, permits in (("64 (no bound, as before)", "64"), ("1 (half of 2 cores)", "0")):
        quiet, stressed, statuses = measure(permits, args.seconds)
        ratio = stressed / quiet
        answers = ", ".join(f"{count} × {status}" for status, count in sorted(statuses.items()))
        print(f"| {label} | {quiet:.1f} | {stressed:.1f} | {ratio:.2f} | {answers} |")
        if permits == "0":
            ok = ratio <= 2.0
    print("target met" if ok else "TARGET MISSED: the flooded home page is more than 2x slower")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

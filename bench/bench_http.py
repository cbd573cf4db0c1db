"""Requests per second and latency under wrk, against gunicorn with production settings.

    python bench/bench_http.py [--seconds 10] [--connections 16]

Starts `gunicorn --config config/gunicorn.conf.py` on a free port with a scratch SQLite
database holding the bundled lessons, then runs wrk (Debian's package) on each page. The
machine is shared and noisy, so each page is reported as a ratio to a trivial Django view
(/healthz) measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PAGES = {
    "trivial view (/healthz)": "/healthz",
    "card page (answer shown)": "/learn/llm-inference-performance/concurrency-sweep/step-1/?answer=shown",
    "/sim/ (default parameters)": "/sim/",
    "/sim/sweep.json (default)": "/sim/sweep.json",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def production_env(database_url: str, port: int) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_ENV": "production",
        "DJANGO_INSECURE_HTTP": "1",
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "FELAB_BIND": f"127.0.0.1:{port}",
        "FELAB_ACCESS_LOG": os.devnull,
        "FELAB_CACHE_DIR": tempfile.mkdtemp(prefix="felab-bench-cache-"),
        # The benchmark measures the pages, not the rate limiter.
        "FELAB_SWEEP_LIMIT": "0",
        "FELAB_LOGIN_LIMIT": "0",
    }


def start_site(env: dict[str, str], port: int) -> subprocess.Popen:
    for command in (["migrate", "--noinput"], ["import_lessons"], ["collectstatic", "--noinput"]):
        subprocess.run([PY, "manage.py", *command, "-v", "0"], cwd=ROOT, env=env, check=True)
    gunicorn = str(Path(PY).with_name("gunicorn"))
    process = subprocess.Popen(
        [gunicorn, "--config", "config/gunicorn.conf.py"], cwd=ROOT, env=env, start_new_session=True
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return process
        except OSError:
            time.sleep(0.2)
    stop(process)
    raise SystemExit("gunicorn did not start")


def stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


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

    scratch = Path(tempfile.mkdtemp(prefix="felab-bench-"))
    port = free_port()
    env = production_env(f"sqlite:///{scratch / 'bench.sqlite3'}", port)
    site = start_site(env, port)
    try:
        rows = []
        for name, path in PAGES.items():
            url = f"http://127.0.0.1:{port}{path}"
            urllib.request.urlopen(url, timeout=10).read()  # warm caches
            rows.append((name, *wrk(url, args.seconds, args.connections)))
    finally:
        stop(site)

    base = rows[0][1]
    print(f"wrk -t2 -c{args.connections} -d{args.seconds}s against gunicorn (production settings, SQLite)")
    print(f"{'page':<30} {'req/s':>9} {'ratio':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for name, rps, p50, p99, bad in rows:
        print(f"{name:<30} {rps:>9.1f} {rps / base:>7.2f} {p50:>8.2f} {p99:>8.2f} {bad:>7}")


if __name__ == "__main__":
    main()

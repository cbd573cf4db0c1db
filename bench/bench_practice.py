"""Benchmark the practice server against the model it follows, over real HTTP on this machine.

    .venv/bin/python bench/bench_practice.py [--capacity-levels 64,128,256,512] [--skip-sweep]

Each part starts ``manage.py practice_server`` in its own process on a free port (the load
generator runs in this process, so server and client each have a core) and measures it with
felab_sim.engine.sweep.loadgen:

1. The real sweep at C = 1, 8, 16 with the server's defaults, against the simulated sweep
   with the default overheads. Targets: agg_tok_s and user_tok_s within 3 %, TTFT p50 within 10 %.
2. 64 slots at C = 64 (the sweep's 192 requests): the median inter-token gap against the
   model's decode step for 64 active requests. Target: within 2 %.
3. The highest C the server holds: slots = C for each C given, one round of C requests, the
   same 2 % target on the median gap.

"Gap at full load" counts only gaps that began while all C requests were in flight as the
client saw them, so the step it is compared with is exactly the model's step for C active
requests; part 2 also shows the per-request median (docs/architecture.md) (1000 / user_tok_s).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import itertools
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from felab_sim.engine.sweep.loadgen import LevelRun, SweepClient, measure_sweep  # noqa: E402
from felab_sim.engine.sweep.prompts import prompt_tokens, sweep_prompt  # noqa: E402
from felab_sim.engine.sweep.simulator import run_sweep  # noqa: E402
from felab_sim.engine.sweep.sweep_params import ServerParams, SweepParams  # noqa: E402

SWEEP_LEVELS = (1, 8, 16)
THROUGHPUT_TARGET = 0.03
TTFT_TARGET = 0.10
GAP_TARGET = 0.02
MAX_TOKENS = 128


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def practice_server(slots: int | None = None) -> Iterator[tuple[str, int]]:
    """A practice server in its own process; yields (API root URL, pid)."""
    port = free_port()
    command = [sys.executable, "manage.py", "practice_server", "--port", str(port), "-v", "0"]
    if slots is not None:
        command += ["--slots", str(slots)]
    process = subprocess.Popen(command, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    json.load(response)
                break
            except (urllib.error.URLError, ConnectionError):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the practice server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1", process.pid
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def pct(measured: float, reference: float) -> float:
    return (measured / reference - 1.0) * 100.0


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def progress_line(level_index: int, conc: int, done: int, total: int) -> None:
    # One line per level, rewritten in place as requests finish.
    end = "\n" if done == total else ""
    print(f"\r  C={conc:<4} {done:>4}/{total} done", end=end, flush=True)


# --------------------------------------------------------------------------- part 1


def sweep_accuracy() -> bool:
    print(f"1. Real sweep vs simulated (default server, default overheads), C = {SWEEP_LEVELS}")
    params = SweepParams(levels=SWEEP_LEVELS)
    with practice_server() as (url, _pid):
        started = time.perf_counter()
        measured = asyncio.run(measure_sweep(url, params, on_progress=progress_line))
        took = time.perf_counter() - started
    simulated = run_sweep(params)
    print(f"  ({took:.0f} s)")
    print(f"  {'C':>3}  {'metric':<12} {'measured':>9} {'model':>9} {'diff':>7} {'target':>7}")
    all_ok = True
    for real, model in zip(measured.levels, simulated.levels, strict=True):
        for name, target in (
            ("agg_tok_s", THROUGHPUT_TARGET),
            ("user_tok_s", THROUGHPUT_TARGET),
            ("ttft_p50_ms", TTFT_TARGET),
        ):
            a, b = getattr(real, name), getattr(model, name)
            ok = abs(pct(a, b)) <= target * 100
            all_ok &= ok
            print(
                f"  {real.conc:>3}  {name:<12} {a:>9.1f} {b:>9.1f} {pct(a, b):>+6.1f}% "
                f"{'±' + format(target * 100, 'g') + '%':>7} {verdict(ok)}"
            )
    return all_ok


# --------------------------------------------------------------------------- parts 2 and 3


def full_load_gaps_ms(run: LevelRun) -> list[float]:
    """Gaps (ms) that began while all ``run.conc`` requests were in flight, as the client saw it."""
    sents = sorted(t.sent for t in run.timings)
    ends = sorted(run.ended)
    gaps = []
    for timing in run.timings:
        for start, stop in itertools.pairwise(timing.chunk_times):
            if bisect.bisect_right(sents, start) - bisect.bisect_right(ends, start) >= run.conc:
                gaps.append((stop - start) * 1000.0)
    return gaps


def measure_gap(conc: int, n_requests: int) -> dict[str, float]:
    server = ServerParams(slots=conc)
    with practice_server(slots=conc) as (url, pid):

        async def run_one_level() -> LevelRun:
            async with SweepClient(url) as client:
                await client.warm_up()
                return await client.run_level(
                    conc, MAX_TOKENS, n_requests, on_done=lambda done, n: progress_line(0, conc, done, n)
                )

        cpu_before = cpu_seconds(pid)
        run = asyncio.run(run_one_level())
        cpu = cpu_seconds(pid) - cpu_before
    gaps = full_load_gaps_ms(run)
    metrics = run.metrics(slo_ms=500.0)
    return {
        "step": server.decode_step_ms(conc),
        "gap": statistics.median(gaps),
        "gaps": len(gaps),
        "per_request": 1000.0 / metrics.user_tok_s,
        "ttft_p50": metrics.ttft_p50_ms,
        "prefill": server.prefill_ms(prompt_tokens(sweep_prompt(0))),
        "wall": run.wall_s,
        "tok_s": metrics.agg_tok_s,
        "cpu": cpu / run.wall_s * 100.0,
    }


def report_gap(conc: int, r: dict[str, float], *, per_request: bool) -> bool:
    ok = abs(pct(r["gap"], r["step"])) <= GAP_TARGET * 100
    line = (
        f"  C={conc:<4} model step {r['step']:7.2f} ms | median gap at full load {r['gap']:7.2f} ms "
        f"({pct(r['gap'], r['step']):+.2f}%, {r['gaps']} gaps) {verdict(ok)}"
    )
    if per_request:
        # With one round of requests the last tokens of each reply come as others finish, at
        # fewer active requests: this number means something only in a full sweep level.
        line += f" | 1000/user_tok_s {r['per_request']:.2f} ms ({pct(r['per_request'], r['step']):+.2f}%)"
    line += (
        f"\n         TTFT p50 {r['ttft_p50']:.1f} ms (prefill alone {r['prefill']:.1f}) | "
        f"{r['tok_s']:.0f} tok/s | server CPU {r['cpu']:.0f}% of a core | {r['wall']:.0f} s"
    )
    print(line)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capacity-levels", default="64,128,256,512", help="C values for part 3")
    parser.add_argument("--skip-sweep", action="store_true", help="skip parts 1 and 2")
    args = parser.parse_args()
    levels = [int(c) for c in args.capacity_levels.split(",") if c.strip()]
    print(f"practice server benchmark on {os.cpu_count()} cores, Python {sys.version.split()[0]}\n")

    results = []
    if not args.skip_sweep:
        results.append(sweep_accuracy())
        print("\n2. 64 slots at C = 64, the sweep's 192 requests")
        results.append(report_gap(64, measure_gap(64, 192), per_request=True))

    print(f"\n3. Highest C held within {GAP_TARGET * 100:g} %: slots = C, one round of C requests")
    held = [conc for conc in levels if report_gap(conc, measure_gap(conc, conc), per_request=False)]
    print(f"\nHeld within {GAP_TARGET * 100:g} %: {held or 'none'}; highest: {max(held) if held else 'none'}")
    return 0 if all(results) and held else 1


if __name__ == "__main__":
    sys.exit(main())

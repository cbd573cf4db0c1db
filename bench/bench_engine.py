"""Benchmark the continuous-batching engine against real vLLM runs (issue 24's anchors).

    FELAB_LLMSERVINGSIM=PATH .venv/bin/python bench/bench_engine.py [--repeat 3] [--fit HARDWARE]

The runs are LLMServingSim's (github.com/casys-kaist/LLMServingSim, MIT), which felab does not
copy: PATH is a checkout of that repository, or a bare git clone of it (read with ``git show``).
Only the three runs issue 24 names are read; the repository's other runs are kept back for an
independent check and this script never opens them.

Per run and metric it prints measured, felab, error and target (mean TPOT, mean latency and
total time within 10 %, mean TTFT within 20 %), the KV pool against the engine's own count where
the run records it (the RTX 4090 run: 41,408 tokens, within 3 %), the peaks of the running and
waiting curves, and the CPU time to simulate the 300-request trace (budget 2 s). ``--fit`` runs
the grid search that chose a hardware's calibration (felab_sim/engine/serving/step_time.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from felab_sim.engine.hardware.hardware import hardware_preset  # noqa: E402
from felab_sim.engine.models.model_presets import preset  # noqa: E402
from felab_sim.engine.serving.anchors import (  # noqa: E402
    ANCHOR_FILE,
    ANCHOR_SPECS,
    AnchorSpec,
    anchor_file,
    derive,
    run_from_entry,
)
from felab_sim.engine.serving.anchors import settings_from_meta as anchor_settings  # noqa: E402
from felab_sim.engine.serving.engine_params import anchor_felab  # noqa: E402
from felab_sim.engine.serving.run_results import Result, measured_summary  # noqa: E402
from felab_sim.engine.serving.simulate import EngineSettings, read_trace, simulate  # noqa: E402
from felab_sim.engine.serving.step_time import Calibration, calibration_for  # noqa: E402
from felab_sim.engine.sweep.limits import ENGINE_WEB_LIMITS  # noqa: E402

ENVIRONMENT = "FELAB_LLMSERVINGSIM"
HOW_TO_GET = f"""\
The anchor runs are not part of felab. Get LLMServingSim (MIT) and point {ENVIRONMENT} at it:

    git clone https://github.com/casys-kaist/LLMServingSim
    {ENVIRONMENT}=LLMServingSim .venv/bin/python bench/bench_engine.py

(a bare clone, `git clone --bare`, works too: the files are read with `git show HEAD:...`)."""

TARGETS = {"ttft_mean_ms": 0.20, "tpot_mean_ms": 0.10, "latency_mean_ms": 0.10, "total_s": 0.10}
KV_TARGET = 0.03
SIMULATION_BUDGET_S = 2.0


ANCHORS = ANCHOR_SPECS


class Source:
    """Files of an LLMServingSim checkout, or of a bare clone through ``git show``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bare = not (path / "bench").is_dir() and (path / "HEAD").is_file()

    def read(self, relative: str) -> str:
        if not self.bare:
            return (self.path / relative).read_text()
        return subprocess.run(
            ["git", "--git-dir", str(self.path), "show", f"HEAD:{relative}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def commit(self) -> str:
        where = ["--git-dir", str(self.path)] if self.bare else ["-C", str(self.path)]
        return subprocess.run(
            ["git", *where, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
        ).stdout.strip()


@dataclass(frozen=True)
class Anchor:
    run: AnchorSpec
    rows: list[dict]
    meta: dict
    timeseries: list[dict]


def load(source: Source, run: AnchorSpec) -> Anchor:
    base = f"bench/examples/{run.folder}/vllm"
    rows = [json.loads(line) for line in source.read(f"{base}/requests.jsonl").splitlines() if line.strip()]
    meta = json.loads(source.read(f"{base}/meta.json"))
    series = list(csv.DictReader(io.StringIO(source.read(f"{base}/timeseries.csv"))))
    return Anchor(run, rows, meta, series)


def settings_from_meta(anchor: Anchor) -> EngineSettings:
    """The run's own engine settings where its meta.json states them."""
    return anchor_settings(anchor.run, anchor.meta)


def run_engine(anchor: Anchor, calibration: Calibration | None = None) -> tuple[Result, float]:
    trace = read_trace(json.dumps(row) for row in anchor.rows)
    shape = preset(anchor.run.model).shape
    hardware = hardware_preset(anchor.run.hardware)
    started = time.process_time()
    result = simulate(trace, shape, hardware, settings_from_meta(anchor), calibration)
    return result, time.process_time() - started


def errors(anchor: Anchor, result: Result) -> dict[str, tuple[float, float, float]]:
    measured = measured_summary(anchor.rows)
    return {
        key: (measured[key], result.summary[key], result.summary[key] / measured[key] - 1) for key in TARGETS
    }


def report(anchor: Anchor, repeat: int) -> bool:
    timings = []
    for _ in range(repeat):
        result, seconds = run_engine(anchor)
        timings.append(seconds)
    print(f"\n{anchor.run.label} ({anchor.run.hardware}, {anchor.run.model})")
    print(f"  {'metric':<16} {'measured':>11} {'felab':>11} {'error':>8} {'target':>7}  met")
    met = True
    for key, (measured, felab, error) in errors(anchor, result).items():
        ok = abs(error) <= TARGETS[key]
        met &= ok
        print(
            f"  {key:<16} {measured:>11.1f} {felab:>11.1f} {100 * error:>+7.1f}% "
            f"{100 * TARGETS[key]:>6.0f}%  {'yes' if ok else 'NO'}"
        )
    recorded = (anchor.meta.get("kv_cache") or {}).get("num_kv_tokens")
    if recorded:
        error = result.pool.kv_tokens / recorded - 1
        ok = abs(error) <= KV_TARGET
        met &= ok
        print(
            f"  {'kv_tokens':<16} {recorded:>11,} {result.pool.kv_tokens:>11,} {100 * error:>+7.1f}% "
            f"{100 * KV_TARGET:>6.0f}%  {'yes' if ok else 'NO'}"
        )
    else:
        print(f"  kv_tokens        (not recorded) {result.pool.kv_tokens:>11,} a GPU")
    peak = {key: max(float(row[key]) for row in anchor.timeseries) for key in ("running", "waiting")}
    felab_peak = {
        "running": max(s.running for s in result.timeseries),
        "waiting": max(s.waiting for s in result.timeseries),
    }
    print(
        f"  peaks            running {peak['running']:.0f} measured / {felab_peak['running']} felab; "
        f"waiting {peak['waiting']:.0f} / {felab_peak['waiting']}; preemptions {result.preemptions}"
    )
    best = min(timings)
    fast = best <= SIMULATION_BUDGET_S
    met &= fast
    print(
        f"  simulation       {best:.2f} s CPU (best of {repeat}), {result.steps:,} steps; "
        f"budget {SIMULATION_BUDGET_S:.0f} s: {'yes' if fast else 'NO'}"
    )
    return met


def fit(anchors: list[Anchor], hardware: str) -> None:
    """A grid over one hardware's efficiencies on its dense runs (for comparison: the engine's own
    calibration is measured, felab_sim/engine/hardware/calibration.py)."""
    dense = [a for a in anchors if a.run.hardware == hardware and a.run.settings.data_parallel == 1]
    held = calibration_for(hardware_preset(hardware))
    scored = []
    for memory, compute, overhead in itertools.product(
        (0.7, 0.75, 0.8, 0.85, 0.9), (0.45, 0.6, 0.75, 0.9), (0.002, 0.004)
    ):
        calibration = replace(
            held, memory_efficiency=memory, compute_efficiency=compute, step_overhead_s=overhead
        )
        worst = 0.0
        for anchor in dense:
            result, _ = run_engine(anchor, calibration)
            for key, (_, _, error) in errors(anchor, result).items():
                worst = max(worst, abs(error) / TARGETS[key])
        scored.append((worst, memory, compute, overhead))
    scored.sort()
    print(f"\nfit on {', '.join(a.run.label for a in dense)}: worst error ÷ target, best first")
    for worst, memory, compute, overhead in scored[:5]:
        print(
            f"  memory {memory:.2f}  compute {compute:.2f}  overhead {1000 * overhead:.0f} ms  -> {worst:.2f}"
        )


REPOSITORY = "github.com/casys-kaist/LLMServingSim"


def export_anchors(source: Source, anchors: list[Anchor], path: Path = ANCHOR_FILE) -> dict:
    """Write the web app's derived file of the three runs (felab_sim/engine/serving/anchors.py),
    with a header naming where every figure came from and the licence they come under."""
    licence = source.read("LICENSE")
    copyright_line = next(line for line in licence.splitlines() if line.startswith("Copyright"))
    files = ("requests.jsonl", "meta.json", "timeseries.csv")
    data = {
        "source": {
            "repository": REPOSITORY,
            "commit": source.commit(),
            "files": [f"bench/examples/{a.run.folder}/vllm/{name}" for a in anchors for name in files],
            "derived_by": "bench/bench_engine.py --export-anchors",
            "what": "per run: the trace (arrival s after the first, input and output tokens), the "
            "engine settings and KV pool from meta.json, the per-second running, waiting and "
            "KV % of timeseries.csv, and the means of requests.jsonl with issue 24's definitions "
            "(TTFT = first token - queued; TPOT = (last - first token) / (output tokens - 1); "
            "latency = last token - queued; total = last token - first queued)",
            "licence": "MIT",
            "copyright": copyright_line,
            "licence_text": licence,
        },
        "runs": [derive(a.run, a.rows, a.meta, a.timeseries) for a in anchors],
    }
    with_felab(data)
    write_anchor_file(data, path)
    return data


def with_felab(data: dict) -> dict:
    """Put felab's run of each measured trace beside it (the ``felab`` section the web reads when
    its settings are the run's), simulated as the engine page would, with the web's sample
    interval and sweep cap: tests/sim/test_anchor_felab.py holds the two equal."""
    data["source"]["felab"] = (
        "per run, felab's own run of that trace (not measured: computed by felab's engine): its "
        "inputs (presets, engine settings, sample interval, sweep cap), every field of the result "
        "and lesson 03's sweep beside it"
    )
    specs = {spec.folder: spec for spec in ANCHOR_SPECS}
    for entry in data["runs"]:
        entry.pop("felab", None)
        run = run_from_entry(specs[entry["folder"]], entry)
        entry["felab"] = anchor_felab(run, ENGINE_WEB_LIMITS.sample_interval, ENGINE_WEB_LIMITS.sweep_work)
    return data


def write_anchor_file(data: dict, path: Path = ANCHOR_FILE) -> None:
    # One line for each list of numbers (a request of the trace, a curve): a diff stays readable.
    text = re.sub(
        r"\[[-0-9.e,\s]*\]",
        lambda m: re.sub(r"\s+", "", m.group()).replace(",", ", "),
        json.dumps(data, indent=1),
    )
    path.write_text(text + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="simulations a run, the best CPU time kept")
    parser.add_argument("--fit", metavar="HARDWARE", help="rerun the calibration grid for one hardware")
    parser.add_argument(
        "--export-anchors",
        action="store_true",
        help=f"write the three runs' derived file the web app reads ({ANCHOR_FILE.relative_to(ROOT)})",
    )
    parser.add_argument(
        "--export-felab",
        action="store_true",
        help="recompute only felab's stored run of each measured trace in that file (after an "
        "engine change; needs no LLMServingSim checkout)",
    )
    args = parser.parse_args()
    if args.export_felab:
        write_anchor_file(with_felab(json.loads(json.dumps(anchor_file()))))
        print(
            f"wrote felab's runs into {ANCHOR_FILE.relative_to(ROOT)} ({ANCHOR_FILE.stat().st_size:,} bytes)"
        )
        return 0
    path = os.environ.get(ENVIRONMENT)
    if not path or not Path(path).exists():
        print(f"{ENVIRONMENT} is {'not set' if not path else f'{path!r}, which does not exist'}.\n")
        print(HOW_TO_GET)
        return 2
    source = Source(Path(path))
    anchors = [load(source, run) for run in ANCHORS]
    if args.export_anchors:
        export_anchors(source, anchors)
        print(f"wrote {ANCHOR_FILE.relative_to(ROOT)} ({ANCHOR_FILE.stat().st_size:,} bytes)")
        return 0
    if args.fit:
        fit(anchors, args.fit)
        return 0
    print("felab's continuous-batching engine against LLMServingSim's vLLM 0.19 runs (300 ShareGPT requests)")
    met = [report(anchor, max(1, args.repeat)) for anchor in anchors]
    print(f"\n{sum(met)} of {len(met)} runs meet every target")
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())

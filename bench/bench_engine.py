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
the grid search that chose a hardware's calibration (felab_sim/engine/batching/step_time.py).
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from felab_sim.engine.batching.simulate import (  # noqa: E402
    EngineSettings,
    Result,
    measured_summary,
    read_trace,
    simulate,
)
from felab_sim.engine.batching.step_time import Calibration, calibration_for  # noqa: E402
from felab_sim.engine.hardware import hardware_preset  # noqa: E402
from felab_sim.engine.model_presets import preset  # noqa: E402

ENVIRONMENT = "FELAB_LLMSERVINGSIM"
HOW_TO_GET = f"""\
The anchor runs are not part of felab. Get LLMServingSim (MIT) and point {ENVIRONMENT} at it:

    git clone https://github.com/casys-kaist/LLMServingSim
    {ENVIRONMENT}=LLMServingSim .venv/bin/python bench/bench_engine.py

(a bare clone, `git clone --bare`, works too: the files are read with `git show HEAD:...`)."""

TARGETS = {"ttft_mean_ms": 0.20, "tpot_mean_ms": 0.10, "latency_mean_ms": 0.10, "total_s": 0.10}
KV_TARGET = 0.03
SIMULATION_BUDGET_S = 2.0


@dataclass(frozen=True)
class AnchorRun:
    folder: str  # under bench/examples/
    model: str
    hardware: str
    settings: EngineSettings

    @property
    def label(self) -> str:
        return self.folder.replace("/", " ")


ANCHORS = (
    AnchorRun("RTX4090/Llama-3.1-8B", "Llama-3.1-8B", "rtx-4090", EngineSettings(max_num_seqs=256)),
    AnchorRun("RTXPRO6000/Llama-3.1-8B", "Llama-3.1-8B", "rtx-pro-6000", EngineSettings(max_num_seqs=128)),
    AnchorRun(
        "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507",
        "Qwen3-30B-A3B",  # the Instruct-2507 release has the base model's config.json shape
        "rtx-pro-6000",
        EngineSettings(max_num_seqs=128, data_parallel=2, expert_parallel=True),
    ),
)


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


@dataclass(frozen=True)
class Anchor:
    run: AnchorRun
    rows: list[dict]
    meta: dict
    timeseries: list[dict]


def load(source: Source, run: AnchorRun) -> Anchor:
    base = f"bench/examples/{run.folder}/vllm"
    rows = [json.loads(line) for line in source.read(f"{base}/requests.jsonl").splitlines() if line.strip()]
    meta = json.loads(source.read(f"{base}/meta.json"))
    series = list(csv.DictReader(io.StringIO(source.read(f"{base}/timeseries.csv"))))
    return Anchor(run, rows, meta, series)


def settings_from_meta(anchor: Anchor) -> EngineSettings:
    """The run's own engine settings where its meta.json states them."""
    kwargs = anchor.meta.get("engine_kwargs", {})
    cache = anchor.meta.get("kv_cache") or {}
    settings = anchor.run.settings
    return replace(
        settings,
        max_num_seqs=kwargs.get("max_num_seqs", settings.max_num_seqs),
        max_num_batched_tokens=kwargs.get("max_num_batched_tokens", settings.max_num_batched_tokens),
        tensor_parallel=kwargs.get("tensor_parallel_size", settings.tensor_parallel),
        data_parallel=kwargs.get("data_parallel_size", settings.data_parallel),
        expert_parallel=kwargs.get("enable_expert_parallel", settings.expert_parallel),
        block_size=cache.get("block_size", settings.block_size),
        gpu_memory_utilization=cache.get("gpu_memory_utilization", settings.gpu_memory_utilization),
        prefix_caching=cache.get("enable_prefix_caching", settings.prefix_caching),
    )


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
    """The grid search of step_time.CALIBRATIONS, on the dense runs of one hardware."""
    dense = [a for a in anchors if a.run.hardware == hardware and a.run.settings.data_parallel == 1]
    held = calibration_for(hardware)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="simulations a run, the best CPU time kept")
    parser.add_argument("--fit", metavar="HARDWARE", help="rerun the calibration grid for one hardware")
    args = parser.parse_args()
    path = os.environ.get(ENVIRONMENT)
    if not path or not Path(path).exists():
        print(f"{ENVIRONMENT} is {'not set' if not path else f'{path!r}, which does not exist'}.\n")
        print(HOW_TO_GET)
        return 2
    source = Source(Path(path))
    anchors = [load(source, run) for run in ANCHORS]
    if args.fit:
        fit(anchors, args.fit)
        return 0
    print("felab's continuous-batching engine against LLMServingSim's vLLM 0.19 runs (300 ShareGPT requests)")
    met = [report(anchor, max(1, args.repeat)) for anchor in anchors]
    print(f"\n{sum(met)} of {len(met)} runs meet every target")
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())

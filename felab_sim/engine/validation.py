"""felab's predictions beside what was measured, in two groups: points a number was fitted on,
and points predicted (nothing fitted on them). bench/bench_validation.py prints it,
docs/benchmarks.md and /sim/engine/ show it.

- LLMServingSim's three named vLLM runs (felab_sim/engine/batching/anchors.py): felab's stored
  run of each (tests/sim/test_anchor_felab.py holds it equal to the engine's), TTFT, TPOT,
  latency and total time. Numbers fitted on them: calibration.FITTED_MEMORY_EFFICIENCY and
  calibration.VLLM_STEP_OVERHEAD_S, so all three are in the fitted group.
- The H200's decode steps and prefills (felab_sim/engine/measured/h200.jsonl): the one step-cost
  function at the H200's calibration, which reads only that file's bandwidth, gemm and knee
  rows (no engine overhead: the steps are CUDA-graph replays of plain PyTorch, no vLLM).

Pure Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .batching.anchors import anchor_runs
from .calibration import MEASURED_FILES, gpu_calibration, read_rows
from .hardware import hardware_preset
from .model_presets import preset
from .step_cost import Parallelism, decode_load, model_cost, prefill_load, step_cost

FITTED, PREDICTED = "fitted", "predicted"
# The anchor metrics and their targets (issue 43: TTFT 20%, the rest 10%).
ANCHOR_METRICS = (
    ("ttft_mean_ms", "mean TTFT", "s", 0.001, 0.20),
    ("tpot_mean_ms", "mean TPOT", "ms", 1.0, 0.10),
    ("latency_mean_ms", "mean latency", "s", 0.001, 0.10),
    ("total_s", "total time", "s", 1.0, 0.10),
)
H200_TARGET = 0.10
H200_MODEL = "Llama-3.1-8B"  # the measured step's shape (the file's "model" row)
H200_WHAT = "H200, a Llama-3.1-8B-shaped step in plain PyTorch (sequences × context, prompt tokens)"


@dataclass(frozen=True)
class Point:
    group: str  # FITTED or PREDICTED
    what: str
    metric: str
    unit: str
    measured: float
    predicted: float
    target: float  # the largest error the issue allows, as a share

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1

    @property
    def met(self) -> bool:
        return abs(self.error) <= self.target


def anchor_points() -> list[Point]:
    points = []
    for run in anchor_runs():
        felab = run.felab_result()
        assert felab is not None  # the file keeps felab's run of each
        for key, label, unit, scale, target in ANCHOR_METRICS:
            points.append(
                Point(
                    FITTED,
                    f"vLLM on {run.where.split(' on ', 1)[1].split(' (')[0]}, {run.spec.model}",
                    label,
                    unit,
                    run.summary[key] * scale,
                    felab.summary[key] * scale,
                    target,
                )
            )
    return points


def h200_points() -> list[Point]:
    hardware = hardware_preset("h200")
    calibration = gpu_calibration(hardware)
    shape = preset(H200_MODEL).shape
    cost = model_cost(shape, 2.0, 2.0, Parallelism())
    rows = read_rows(MEASURED_FILES["h200"].read_text())
    points = []
    for row in rows:
        if row.get("repeat") or "s" not in row:
            continue
        if row["kind"] == "decode":
            load = decode_load(int(row["B"]), int(row["T"]) + 1)
            metric = f"decode, {row['B']} × {row['T']:,}"
        elif row["kind"] == "prefill":
            load = prefill_load(int(row["P"]))
            metric = f"prefill, {row['P']:,}"
        else:
            continue
        step = step_cost(cost, hardware, calibration, load)
        points.append(
            Point(PREDICTED, H200_WHAT, metric, "ms", row["s"] * 1000, step.seconds * 1000, H200_TARGET)
        )
    return points


@cache
def validation_points() -> tuple[Point, ...]:
    return tuple(anchor_points() + h200_points())


def _shown(value: float, unit: str) -> str:
    return f"{value:,.3g} {unit}" if value < 100 else f"{value:,.1f} {unit}"


def markdown_row(point: Point) -> str:
    """One point as docs/benchmarks.md's table has it (a test holds the two the same)."""
    cells = (
        point.what,
        point.metric,
        _shown(point.measured, point.unit),
        _shown(point.predicted, point.unit),
        f"{100 * point.error:+.1f}%" + ("" if point.met else " (missed)"),
        f"{100 * point.target:.0f}%",
    )
    return "| " + " | ".join(cells) + " |"

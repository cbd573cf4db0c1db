"""felab's engine run the way each published serving run was run, beside what it measured.

For each row of felab_sim/engine/measured/serving_runs.csv (serving_runs.py reads it), felab's
engine (simulate.py) runs the same benchmark: the same model and GPU presets, precision,
tensor parallelism and engine settings, and the same client (felab_sim/engine/measured/README.md
says how each source ran):

- InferenceX: ``concurrency`` requests in flight, every request queued at once at the start and
  each one that finishes replaced at once (bench_serving's ``--request-rate inf
  --max-concurrency C``), the recorded request count, each prompt and output length an integer
  drawn uniformly from [0.8 L, L] (``--random-range-ratio 0.8``), outputs forced to their length
  (``--ignore-eos``); vLLM's ``max-num-batched-tokens`` 8192 and ``--max-num-seqs`` as its
  script sets them, SGLang's chunked prefill and running-request cap as its script sets them,
  prefix caching off.
- NVIDIA NIM (AIPerf at fixed concurrency): the page gives neither a request count nor a spread
  of lengths, so every request has the named lengths and the run sends 10 × C of them, as
  InferenceX does. NIM's documentation says its optimized profiles are pre-compiled TensorRT-LLM
  engines, preferred over its generic ones (named vllm or local_build; 1.12 adds sglang)
  wherever a compatible one exists; the page gives the profile's precision and TP (fp8 TP2) but
  not its engine, so these runs most likely ran TensorRT-LLM. felab has no TensorRT-LLM model:
  they run as vLLM with vLLM's defaults for an API server on an 80 GB GPU.

Each run returns felab's mean TTFT, mean TPOT and output tokens a second per GPU (the source's
definition: the run's output tokens over its wall time, from the first request sent to the last
token, divided by the server's GPUs; InferenceX's total throughput adds the prompt tokens).

Every run is bounded by the engine's own work budget (simulate.MAX_WORK). All 92 runs take a
few minutes of CPU, so felab's figures are stored (serving_predictions.json, rewritten by
``bench/bench_validation.py --export-serving``) and a test reruns some of them to hold the
stored figures equal to the engine's. Pure Python: no Django.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from ..hardware.hardware import Hardware, hardware_preset
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from ..models.model_shapes import ModelShape
from .run_results import Result
from .servers import SGLANG, Server, sglang_server, vllm_server
from .serving_runs import FIT, PREDICT, ServingRun, runs, split
from .simulate import MAX_WORK, ClosedLoop, EngineSettings, TraceRequest, simulate
from .step_time import calibration_for

PREDICTIONS_FILE = Path(__file__).with_name("serving_predictions.json")

# bench_serving's --random-range-ratio in every InferenceX script: lengths in [0.8 L, L].
RANGE_RATIO = 0.8
# InferenceX's scripts send 10 × C requests (--num-prompts $(( CONC * 10 ))); the NIM page gives
# no count, so its runs take the same.
REQUESTS_PER_CONCURRENCY = 10
# MXFP4 (the OCP Microscaling spec): 4-bit values and one 8-bit scale a block of 32, 4.25 bits a
# weight: the experts' bytes; the step cost keeps gpt-oss's attention, router and embeddings at
# BF16's 2 bytes, as its checkpoint stores them (model_cost.py).
MXFP4_BYTES = 4.25 / 8
# The NIM page's "2 x H100 80G" names no form factor; NIM's published benchmarks run on DGX H100
# systems, SXM parts: taken as the H100 SXM, and said so beside each of its rows.
NIM_GPU = "h100-sxm"

METRICS = (
    # key, label, the run's field, the validation kind it feeds (validation.KIND_WORDS)
    ("ttft_mean_ms", "mean TTFT", "ttft_mean_ms", "mean TTFT"),
    ("tpot_mean_ms", "mean TPOT", "tpot_mean_ms", "mean TPOT"),
    ("output_tok_s_per_gpu", "output tok/s per GPU", "output_tok_s_per_gpu", "total time"),
)
# Issue 48's floors for the predicted group: the median and the 90th percentile of |error|
# (None: no floor set for that statistic).
FLOORS = {
    "ttft_mean_ms": (0.20, 0.40),
    "tpot_mean_ms": (0.08, 0.20),
    "output_tok_s_per_gpu": (0.10, None),
}


@dataclass(frozen=True)
class RunSetup:
    """What felab runs for one published run: presets, settings, the requests and the client."""

    run: ServingRun
    shape: ModelShape
    hardware: Hardware
    settings: EngineSettings
    sizes: tuple[TraceRequest, ...]
    closed_loop: ClosedLoop
    server: Server  # the engine's order of steps, CUDA graphs and a request's fixed cost
    notes: tuple[str, ...]  # what felab had to assume


def _bytes_per_param(run: ServingRun) -> float:
    precision = run.precision.lower()
    if precision.startswith("mxfp4"):
        return MXFP4_BYTES
    if precision.startswith("fp8"):
        return 1.0
    if precision.startswith("bf16"):
        return 2.0
    raise ValueError(f"{run.run_id}: precision {run.precision!r} has no felab equivalent")


def _kv_bytes(run: ServingRun) -> float:
    # An empty KV precision (the NIM page does not say) is the engines' default: the model's 16 bits.
    return 1.0 if run.kv_precision.lower().startswith("fp8") else 2.0


def _sizes(run: ServingRun, count: int) -> tuple[TraceRequest, ...]:
    """The run's request sizes, drawn as its client draws them, the same every time."""
    if run.source_group != "inferencex":
        return (TraceRequest(0.0, run.input_len, run.output_len),) * count
    rng = random.Random(run.run_id)

    def length(named: int) -> int:
        return rng.randint(max(1, math.floor(RANGE_RATIO * named)), named)

    return tuple(TraceRequest(0.0, length(run.input_len), length(run.output_len)) for _ in range(count))


def _engine_settings(run: ServingRun) -> EngineSettings:
    """The server as its launch script started it (felab_sim/engine/measured/README.md)."""
    common = {
        "prefix_caching": False,
        "tensor_parallel": run.tp,
        "data_parallel": run.dp,
        "expert_parallel": run.ep > 1,
        "bytes_per_param": _bytes_per_param(run),
        "kv_bytes_per_value": _kv_bytes(run),
    }
    if run.source_group == "inferencex" and run.engine == "vllm":
        # --max-num-seqs C on H100 and H200, 512 on B200; --max-num-batched-tokens 8192.
        seqs = 512 if run.felab_gpu == "b200" else run.concurrency
        return EngineSettings(max_num_seqs=seqs, max_num_batched_tokens=8192, **common)
    if run.source_group == "inferencex" and run.engine == "sglang":
        # --chunked-prefill-size 32768 (196,608 on MI300X); --max-running-requests 512 on H200
        # at 1k/1k, 256 otherwise, 128 on B200. mem-fraction-static 0.82 (0.8 on MI300X).
        chunk = 196_608 if run.felab_gpu == "mi300x" else 32_768
        if run.felab_gpu == "b200":
            seqs = 128
        elif run.felab_gpu == "h200" and run.input_len == run.output_len == 1024:
            seqs = 512
        else:
            seqs = 256
        memory = 0.8 if run.felab_gpu == "mi300x" else 0.82
        return EngineSettings(
            max_num_seqs=seqs, max_num_batched_tokens=chunk, gpu_memory_utilization=memory, **common
        )
    # NIM (most likely TensorRT-LLM, which felab does not model; run as vLLM): vLLM's own defaults
    # for its API server on a GPU of 70 GiB or more that is not an A100, 8192 batched tokens and
    # 1024 sequences
    # (vllm-project/vllm, vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults).
    return EngineSettings(max_num_seqs=1024, max_num_batched_tokens=8192, **common)


# InferenceX's gpt-oss scripts: max-cudagraph-capture-size 2048 (benchmarks/gptoss_fp4_*.sh).
VLLM_MAX_CAPTURE_SIZE = 2048


def _sglang_launch(run: ServingRun) -> tuple[int, int]:
    """``--cuda-graph-max-bs`` and ``--scheduler-recv-interval`` as InferenceX's DeepSeek-R1
    scripts set them at the commits ``launch`` names: on B200 128, and a poll every 10 decode
    steps below concurrency 16, 30 from 16 (dsr1_fp8_b200_docker.sh); on H200 the running cap
    (dsr1_fp8_h200_slurm.sh) and on MI300X 128 (dsr1_fp8_mi300x_docker.sh), polling every step
    (SGLang's default)."""
    if run.felab_gpu == "b200":
        return 128, 30 if run.concurrency >= 16 else 10
    if run.felab_gpu == "h200":
        return _engine_settings(run).max_num_seqs, 1
    return 128, 1


def setup(run: ServingRun) -> RunSetup:
    """felab's run of ``run``: a ValueError if felab has no preset for its model."""
    if run.felab_model not in MODEL_PRESETS:
        raise ValueError(f"{run.run_id}: felab has no preset for {run.model}")
    notes = []
    gpu = run.felab_gpu
    if not gpu and run.source_group == "nim":
        gpu, notes = NIM_GPU, ["GPU taken as the H100 SXM (the page says H100 80G)"]
    if run.precision.lower().startswith("mxfp4"):
        notes.append("MXFP4 experts read at 4.25 bits a weight, attention and embeddings at BF16's 2 bytes")
    count = run.request_count or REQUESTS_PER_CONCURRENCY * run.concurrency
    if run.request_count is None:
        notes.append(f"request count not published: {count:,} sent")
    settings = _engine_settings(run)
    if run.engine == SGLANG:
        server = sglang_server(*_sglang_launch(run))
    elif run.source_group == "inferencex":
        server = vllm_server(settings.max_num_seqs, VLLM_MAX_CAPTURE_SIZE)
    else:
        server = vllm_server(settings.max_num_seqs)
        notes.append(
            "run as vLLM: NIM's optimized profiles, preferred where one is compatible, are "
            "TensorRT-LLM engines, which felab does not model"
        )
    return RunSetup(
        run,
        MODEL_PRESETS[run.felab_model].shape,
        hardware_preset(gpu),
        settings,
        _sizes(run, count),
        ClosedLoop(run.concurrency, count),
        server,
        tuple(notes),
    )


def simulate_run(
    run: ServingRun,
    work_budget: float = MAX_WORK,
    request_fixed_s: float | None = None,
    request_serial_s: float | None = None,
    four_bit_grouped_share: float | None = None,
) -> Result:
    """felab's engine on ``run``'s benchmark, bounded by ``work_budget`` (the engine's own cap);
    ``request_fixed_s``, ``request_serial_s`` and ``four_bit_grouped_share`` in place of the
    fitted front end and 4-bit grouped products' rate (the fits')."""
    found = setup(run)
    server = found.server
    if request_fixed_s is not None:
        server = replace(server, request_fixed_s=request_fixed_s)
    if request_serial_s is not None:
        server = replace(server, request_serial_s=request_serial_s)
    calibration = None
    if four_bit_grouped_share is not None:
        calibration = replace(calibration_for(found.hardware), four_bit_grouped_share=four_bit_grouped_share)
    return simulate(
        list(found.sizes),
        found.shape,
        found.hardware,
        found.settings,
        calibration=calibration,
        closed_loop=found.closed_loop,
        sample_interval=None,
        work_budget=work_budget,
        server=server,
    )


def predicted_figures(run: ServingRun, result: Result) -> dict[str, float]:
    """felab's figures for ``run`` from its simulated result, as the source computes them."""
    summary = result.summary
    requests = result.requests
    wall = summary["total_s"]
    prompt_tokens = sum(r.input_toks for r in requests)
    output_tokens = sum(r.output_toks for r in requests)
    return {
        "ttft_mean_ms": summary["ttft_mean_ms"],
        "ttft_median_ms": statistics.median(1000 * r.ttft for r in requests),
        "tpot_mean_ms": summary["tpot_mean_ms"],
        "output_tok_s_per_gpu": output_tokens / wall / run.gpus,
        "total_tok_s_per_gpu": (prompt_tokens + output_tokens) / wall / run.gpus,
    }


def predict(run: ServingRun, work_budget: float = MAX_WORK) -> dict[str, float]:
    return predicted_figures(run, simulate_run(run, work_budget))


def compute_predictions(chosen: Iterable[ServingRun] | None = None) -> dict[str, dict[str, float]]:
    """run_id → felab's figures, for every run (or ``chosen``) felab has the presets for."""
    found = {}
    for run in runs() if chosen is None else chosen:
        if run.felab_model in MODEL_PRESETS:
            found[run.run_id] = predict(run)
    return found


def export_predictions(predictions: dict[str, dict[str, float]]) -> str:
    """The stored file's text: floats exact, so a test can hold them equal to the engine's."""
    return json.dumps(predictions, indent=1, sort_keys=True) + "\n"


@cache
def stored_predictions() -> dict[str, dict[str, float]]:
    if not PREDICTIONS_FILE.exists():
        return {}
    return json.loads(PREDICTIONS_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ServingPoint:
    """One run's one metric: measured, felab's, and the run's group and kind."""

    run: ServingRun
    group: str  # FIT or PREDICT (serving_split.csv)
    metric: str  # a METRICS key
    label: str
    kind: str  # the validation kind it feeds
    measured: float
    predicted: float
    notes: tuple[str, ...]

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1

    @property
    def moe(self) -> bool:
        return self.run.model_kind == "MoE"


@cache
def validated_runs() -> list[ServingRun]:
    """The runs felab has stored figures for."""
    stored = stored_predictions()
    return [run for run in runs() if run.run_id in stored]


@cache
def serving_points() -> tuple[ServingPoint, ...]:
    """Every run felab has stored figures for, each metric the run published (read once: every
    simulated figure's expected error reads them, and each run's notes draw its request sizes)."""
    stored = stored_predictions()
    groups = split()
    points = []
    for run in runs():
        figures = stored.get(run.run_id)
        if figures is None:
            continue
        notes = setup(run).notes
        for key, label, field, kind in METRICS:
            measured = getattr(run, field)
            if measured is None:
                continue
            points.append(
                ServingPoint(run, groups[run.run_id], key, label, kind, measured, figures[key], notes)
            )
    return tuple(points)


def nearest_rank(values: list[float], percent: float) -> float:
    """The smallest value at least ``percent`` of ``values`` are within."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent * len(ordered) / 100) - 1)]


@dataclass(frozen=True)
class Summary:
    group: str
    models: str  # "dense" or "MoE"
    metric: str
    label: str
    runs: int
    median: float  # of |error|
    p90: float

    @property
    def floors(self) -> tuple[float | None, float | None]:
        return FLOORS[self.metric]

    @property
    def met(self) -> bool:
        median_floor, p90_floor = self.floors
        return (median_floor is None or self.median <= median_floor) and (
            p90_floor is None or self.p90 <= p90_floor
        )


def summaries(points: Iterable[ServingPoint] | None = None) -> list[Summary]:
    """Per group, per kind of model, per metric: the median and 90th percentile of |error|."""
    points = serving_points() if points is None else tuple(points)
    found = []
    for group in (FIT, PREDICT):
        for models in ("dense", "MoE"):
            for key, label, _, _ in METRICS:
                errors = [
                    abs(p.error)
                    for p in points
                    if p.group == group and p.run.model_kind == models and p.metric == key
                ]
                if errors:
                    found.append(
                        Summary(
                            group,
                            models,
                            key,
                            label,
                            len(errors),
                            statistics.median(errors),
                            nearest_rank(errors, 90),
                        )
                    )
    return found


def _floor(share: float | None) -> str:
    return "none" if share is None else f"{100 * share:.0f}%"


def summary_row(summary: Summary) -> str:
    """One line of docs/benchmarks.md's serving table (a test holds the two the same)."""
    median_floor, p90_floor = summary.floors
    cells = (
        summary.group,
        summary.models,
        summary.label,
        str(summary.runs),
        f"{100 * summary.median:.1f}%",
        f"{100 * summary.p90:.1f}%",
        f"{_floor(median_floor)} / {_floor(p90_floor)}",
    )
    return "| " + " | ".join(cells) + " |"


def _shown(value: float) -> str:
    return f"{value:,.3g}" if value < 100 else f"{value:,.0f}"


def run_row(run: ServingRun, points: Iterable[ServingPoint]) -> str:
    """One run's line of the per-run table: each metric measured, felab's and the error."""
    by_metric = {p.metric: p for p in points if p.run.run_id == run.run_id}
    cells = [run.run_id, split()[run.run_id]]
    for key, _, _, _ in METRICS:
        point = by_metric.get(key)
        cells.append(
            "–"
            if point is None
            else f"{_shown(point.measured)} → {_shown(point.predicted)} ({100 * point.error:+.0f}%)"
        )
    return "| " + " | ".join(cells) + " |"


# The front end's one-at-a-time part tried by the fit, seconds a request.
SERIAL_GRID_S = (0.0, 0.002, 0.004, 0.006, 0.008, 0.010, 0.012, 0.015, 0.020, 0.025, 0.030)


def fit_request_fixed(
    engine: str, serial_s: float = 0.0, four_bit_grouped_share: float | None = None
) -> tuple[float, list[tuple[str, float]], list[tuple[ServingRun, dict[str, float]]]]:
    """The delay a request of ``engine`` pays outside the steps (servers.REQUEST_FIXED_S) with
    ``serial_s`` of it served one request at a time, fitted on that engine's runs of the fitted
    group only: each run's measured median TTFT less felab's median TTFT without the delay, and
    their median (at least 0). Returns it, each run's figure and felab's figures of each run."""
    found, figures_of = [], []
    for run in runs(group=FIT):
        if run.engine != engine or run.ttft_median_ms is None or run.felab_model not in MODEL_PRESETS:
            continue
        result = simulate_run(
            run, request_fixed_s=0.0, request_serial_s=serial_s, four_bit_grouped_share=four_bit_grouped_share
        )
        figures = predicted_figures(run, result)
        found.append((run.run_id, (run.ttft_median_ms - figures["ttft_median_ms"]) / 1000))
        figures_of.append((run, figures))
    if len(found) < 2:
        raise ValueError(f"{engine}: {len(found)} fitted runs; a fitted number needs several")
    return max(0.0, statistics.median(share for _, share in found)), found, figures_of


def fit_front_end(
    engine: str, shares: tuple[float | None, ...] = (None,)
) -> list[tuple[float | None, float, float, float]]:
    """The front end of ``engine`` fitted on its fitted runs: for each one-at-a-time part of
    SERIAL_GRID_S (and each rate of a grouped 4-bit expert product of ``shares``; None: the
    calibration's), the delay :func:`fit_request_fixed` gives with them and the sum over the runs
    of the squared log of felab's mean TTFT over the measured one (felab's mean taken as its mean
    without the delay plus the delay). (share, serial, delay, score) per grid point, best first."""
    scored = []
    for share, serial in itertools.product(shares, SERIAL_GRID_S):
        fixed, _, figures_of = fit_request_fixed(engine, serial, share)
        score = sum(
            math.log((figures["ttft_mean_ms"] + 1000 * fixed) / run.ttft_mean_ms) ** 2
            for run, figures in figures_of
        )
        scored.append((share, serial, fixed, score))
    return sorted(scored, key=lambda found: found[3])


# A grouped 4-bit expert product's share of a BF16 product's rate tried by its fit.
FOUR_BIT_SHARE_GRID = (1.0, 0.5, 0.3, 0.25, 0.225, 0.2, 0.175, 0.15)

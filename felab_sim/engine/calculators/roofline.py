"""Roofline: is decoding limited by memory or by compute? (lessons 00, 04, 12)

One decode step reads every active weight once and every sequence's KV cache for its context,
and does a multiply and an add with each weight (2 FLOP) for each sequence in the batch. The
step takes the longer of its memory time (bytes ÷ bandwidth) and its compute time (FLOP ÷ peak),
as llm-analysis times each layer. Attention's own FLOP (about 4 × layers × heads × head size per
token of context) are left out: at the course's shapes they are a few percent of the weights'.
Below the ridge point (peak FLOP/s ÷ bandwidth) the bandwidth is the limit. The weights, the KV
of every sequence and a stated overhead must fit in the memory an engine may use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, typed
from ..core.chart import BLUE, Figure, Series, layout, line, these_settings
from ..core.params import Param
from ..hardware.calibration import with_measured
from ..hardware.decode_params import (
    ACTIVE_PARAMS_B,
    BANDWIDTH_GBS,
    BATCH,
    CONTEXT_TOKENS,
    KV_BYTES_PER_TOKEN,
    MEASURED_CALIBRATION,
    MEMORY_UTILIZATION,
    OVERHEAD_GB,
    PARAMS_B,
    PEAK_FP8_TFLOPS,
    active_b,
    check_model_sizes,
)
from ..hardware.decode_step import FLOP_PER_WEIGHT, decode_step
from ..hardware.hardware import dense_peak
from ..hardware.model_reads import weights_read_b, with_model_sizes
from ..models.model_params import KV_DTYPE, MODEL, MODEL_CONFIG
from .decode_ceiling import MODEL_OUTPUTS, model_formulas, model_outputs, peak_formula

FITS = "yes"
DOES_NOT_FIT = "no"
GB = 1e9


def memory_needed_gb(p: Params) -> float:
    """Every weight held (all experts), every sequence's KV for its context, and the overhead."""
    weights = p["params_b"] * p["bytes_per_weight"]
    kv = p["batch"] * p["context_tokens"] * p["kv_bytes_per_token"] / GB
    return weights + kv + p["overhead_gb"]


def largest_batch(p: Params) -> int | None:
    """The most sequences of this context whose KV fits beside the weights and the overhead;
    None when the context is 0 (no KV to hold, so memory sets no limit on the batch)."""
    room = p["memory_gb"] * p["memory_utilization"] - p["params_b"] * p["bytes_per_weight"] - p["overhead_gb"]
    per_sequence = p["context_tokens"] * p["kv_bytes_per_token"] / GB
    if per_sequence == 0:
        return None
    return max(0, math.floor(room / per_sequence + 1e-9))


def peak_tflops(p: Params) -> float:
    """The dense peak at the weights' precision: the FP8 peak for 1-byte weights when one is given
    (settings without it, such as the chain's own through ``compute_with``, use peak_tflops)."""
    peak = dense_peak(p["bytes_per_weight"], p["peak_tflops"], p.get("peak_fp8_tflops"))
    assert peak is not None  # peak_tflops is required
    return peak


def _compute(p: Params) -> dict[str, float | str | None]:
    p = with_model_sizes(p)
    peak = peak_tflops(p) * 1e12
    bandwidth = p["bandwidth_gbs"] * 1e9
    active = active_b(p) * 1e9
    weight_bytes = weights_read_b(p, active_b(p)) * 1e9 * p["bytes_per_weight"]
    kv_bytes = p["batch"] * p["context_tokens"] * p["kv_bytes_per_token"]
    step = decode_step(
        weight_bytes=weight_bytes,
        kv_bytes=kv_bytes,
        active_params=active,
        batch=p["batch"],
        bandwidth=bandwidth,
        peak_flops=peak,
    )
    step_s = step.seconds
    needed = memory_needed_gb(p)
    usable = p["memory_gb"] * p["memory_utilization"]
    fits = needed <= usable
    # Per sequence: the KV read that grows with the batch against the compute that does too.
    kv_per_sequence_s = p["context_tokens"] * p["kv_bytes_per_token"] / bandwidth
    compute_per_sequence_s = FLOP_PER_WEIGHT * active / peak
    ridge_batch = (
        (weight_bytes / bandwidth) / (compute_per_sequence_s - kv_per_sequence_s)
        if compute_per_sequence_s > kv_per_sequence_s
        else None
    )
    return {
        "ridge_flop_per_byte": peak / bandwidth,
        "decode_flop_per_byte": step.flop / step.bytes_read,
        "bound": step.bound,
        "weights_gb_per_step": weight_bytes / GB,
        "kv_gb_per_step": kv_bytes / GB,
        "gb_per_step": step.bytes_read / GB,
        "kv_share_pct": 100.0 * kv_bytes / step.bytes_read,
        "step_ms": 1000.0 * step_s,
        "attainable_tflops": step.flop / step_s / 1e12 if fits else None,
        "attainable_tok_s": p["batch"] / step_s if fits else None,
        "tok_s_per_user": 1 / step_s if fits else None,
        "ridge_batch": ridge_batch,
        "memory_needed_gb": needed,
        "memory_usable_gb": usable,
        "fits": FITS if fits else DOES_NOT_FIT,
        "largest_batch": largest_batch(p),
        "peak_tflops_used": peak / 1e12,
        **model_outputs(p),
    }


def _check(p: Params) -> None:
    check_model_sizes(p)
    with_measured(p, CALCULATOR.params)  # a calibration's figures within the typed fields' bounds


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    p = with_measured(p, CALCULATOR.params)  # checked in _check: never raises here
    peak, bandwidth = peak_tflops(p), p["bandwidth_gbs"] / 1000
    xs = [2 ** (n / 4) for n in range(-8, 60)]
    intensity = CALCULATOR.run(p).value("decode_flop_per_byte")
    data = [
        line("attainable TFLOP/s", xs, [min(peak, bandwidth * x) for x in xs], BLUE),
        # On the roof even where the memory does not hold it: the chart shows the physics.
        these_settings(intensity, min(peak, bandwidth * intensity)),
    ]
    described = layout("arithmetic intensity (FLOP per byte, log)", "TFLOP/s (log)")
    described["xaxis"]["type"] = "log"
    described["yaxis"] = {"title": {"text": "TFLOP/s (log)"}, "type": "log"}
    return {"data": data, "layout": described}


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    entered, p = p, with_model_sizes(p)
    peak, bandwidth = typed(peak_tflops(p), "TFLOP/s"), typed(p["bandwidth_gbs"], "GB/s")
    active = typed(active_b(p))
    sequences = counted(p["batch"], "sequence")
    fits = out("fits") == "yes"
    no_room = f"— : does not fit, needs {out('memory_needed_gb')} of {out('memory_usable_gb')}"
    kv = f"{sequences} × {counted(p['context_tokens'], 'token')} × {typed(p['kv_bytes_per_token'], 'B')}"
    flop = f"2 × {active} × 10⁹ weights × {sequences}"
    return {
        "ridge_flop_per_byte": f"{out('ridge_flop_per_byte')} = {peak} ÷ {bandwidth}",
        "decode_flop_per_byte": f"{out('decode_flop_per_byte')} = {flop} ÷ {out('gb_per_step')}",
        "bound": (
            f"{out('bound')}: memory time {out('gb_per_step')} ÷ {bandwidth} against compute time {flop} ÷ {peak}"
        ),
        "weights_gb_per_step": (
            f"{out('weights_gb_per_step')} = {typed(round(weights_read_b(p, active_b(p)), 4))} × 10⁹ weights read "
            f"(every expert the {sequences} touch: E × (1 − (1 − k/E)^batch) a layer) × {typed(p['bytes_per_weight'], 'B')}"
            if weights_read_b(p, active_b(p)) != active_b(p)
            else f"{out('weights_gb_per_step')} = {active} × 10⁹ weights × {typed(p['bytes_per_weight'], 'B')}"
        ),
        "kv_gb_per_step": f"{out('kv_gb_per_step')} = {kv} ÷ 10⁹",
        "gb_per_step": f"{out('gb_per_step')} = {out('weights_gb_per_step')} + {out('kv_gb_per_step')}",
        "kv_share_pct": f"{out('kv_share_pct')} = {out('kv_gb_per_step')} ÷ {out('gb_per_step')}",
        "step_ms": f"{out('step_ms')} = max({out('gb_per_step')} ÷ {bandwidth}, {flop} ÷ {peak})",
        "attainable_tflops": f"{out('attainable_tflops')} = {flop} ÷ {out('step_ms')}" if fits else no_room,
        "attainable_tok_s": f"{out('attainable_tok_s')} = {sequences} ÷ {out('step_ms')}"
        if fits
        else no_room,
        "tok_s_per_user": f"{out('tok_s_per_user')} = 1 ÷ {out('step_ms')}" if fits else no_room,
        "ridge_batch": (
            f"{out('ridge_batch')} = ({out('weights_gb_per_step')} ÷ {bandwidth}) ÷ (2 × {active} × 10⁹ ÷ {peak} − "
            f"{counted(p['context_tokens'], 'token')} × {typed(p['kv_bytes_per_token'], 'B')} ÷ {bandwidth})"
            if out("ridge_batch") != "—"
            else "— : each sequence's KV read takes longer than its compute, so no batch reaches the ridge"
        ),
        "memory_needed_gb": (
            f"{out('memory_needed_gb')} = {typed(p['params_b'])} × 10⁹ weights × {typed(p['bytes_per_weight'], 'B')} weights + "
            f"{out('kv_gb_per_step')} KV + {typed(p['overhead_gb'], 'GB')} overhead"
        ),
        "memory_usable_gb": f"{out('memory_usable_gb')} = {typed(p['memory_utilization'])} × {typed(p['memory_gb'], 'GB')}",
        "fits": f"{out('fits')}: {out('memory_needed_gb')} {'≤' if fits else '>'} {out('memory_usable_gb')}",
        "largest_batch": (
            "— : at context 0 no KV is kept, so memory sets no limit on the batch"
            if p["context_tokens"] == 0
            else f"{out('largest_batch')} = ⌊({out('memory_usable_gb')} − {typed(p['params_b'])} × 10⁹ × "
            f"{typed(p['bytes_per_weight'], 'B')} − {typed(p['overhead_gb'], 'GB')}) ÷ "
            f"({counted(p['context_tokens'], 'token')} × {typed(p['kv_bytes_per_token'], 'B')})⌋"
        ),
        "peak_tflops_used": peak_formula(p, out("peak_tflops_used")),
        **model_formulas(entered, out),
    }


CALCULATOR = Calculator(
    name="roofline",
    order=60,
    title="Roofline: memory-bound or compute-bound",
    lessons=("00", "04", "12"),
    meaning=(
        "A decode step reads every active weight once for the whole batch but each sequence's KV "
        "cache for itself, so batching raises the work per byte only until the KV reads dominate; "
        "and the weights and every sequence's KV must fit in memory."
    ),
    params=(
        MODEL,
        MODEL_CONFIG,
        Param(
            "peak_tflops",
            "float",
            989.0,
            "Peak dense BF16 compute from the spec sheet, without sparsity (H100 SXM: 989); "
            "used at every precision unless an FP8 peak is given.",
            "TFLOP/s",
            label="peak compute",
            low=0.001,
            high=1_000_000,
        ),
        PEAK_FP8_TFLOPS,
        replace(
            BANDWIDTH_GBS, default=3350.0, help="Memory bandwidth from the spec sheet (H100 SXM: 3,350)."
        ),
        BATCH,
        CONTEXT_TOKENS,
        KV_BYTES_PER_TOKEN,
        Param(
            "bytes_per_weight",
            "float",
            2.0,
            "Bytes per weight (BF16: 2, FP8: 1, 4-bit: about 0.6).",
            "B",
            label="bytes per weight",
            low=0.1,
            high=8,
        ),
        PARAMS_B,
        ACTIVE_PARAMS_B,
        Param(
            "memory_gb",
            "float",
            85.9,
            "Memory on the GPU (H100 SXM: 80 GiB = 85.9 GB).",
            "GB",
            label="GPU memory",
            low=0.1,
            high=1_000_000,
        ),
        MEMORY_UTILIZATION,
        OVERHEAD_GB,
        KV_DTYPE,
        MEASURED_CALIBRATION,
    ),
    outputs=(
        OutputSpec("ridge_flop_per_byte", "FLOP/B", "ridge point"),
        OutputSpec("decode_flop_per_byte", "FLOP/B", "decode's arithmetic intensity"),
        OutputSpec("bound", "", "the limit"),
        OutputSpec("weights_gb_per_step", "GB", "weights read per step"),
        OutputSpec("kv_gb_per_step", "GB", "KV cache read per step, every sequence"),
        OutputSpec("gb_per_step", "GB", "bytes read per step"),
        OutputSpec("kv_share_pct", "%", "KV cache's share of the bytes"),
        OutputSpec("step_ms", "ms", "time per decode step"),
        OutputSpec("attainable_tflops", "TFLOP/s", "attainable compute (empty when it does not fit)"),
        OutputSpec(
            "attainable_tok_s",
            "tok/s",
            "attainable tokens per second, whole batch (empty when it does not fit)",
        ),
        OutputSpec(
            "tok_s_per_user", "tok/s", "tokens per second each sequence gets (empty when it does not fit)"
        ),
        OutputSpec(
            "ridge_batch",
            "sequences",
            "batch where compute becomes the limit (empty: never, KV reads grow as fast)",
        ),
        OutputSpec("memory_needed_gb", "GB", "memory needed: weights + KV + overhead"),
        OutputSpec("memory_usable_gb", "GB", "memory the engine may use"),
        OutputSpec("fits", "", "fits in memory"),
        OutputSpec(
            "largest_batch", "sequences", "largest batch that fits at this context (empty at context 0)"
        ),
        OutputSpec("peak_tflops_used", "TFLOP/s", "peak compute at the weights' precision"),
        *MODEL_OUTPUTS,
    ),
    compute=_compute,
    check=_check,
    formulas=_formulas,
    chart=_chart,
    chart_description=(
        "Attainable compute against arithmetic intensity: the slope is the memory limit, the flat "
        "top the compute limit."
    ),
    examples=(
        WorkedExample(
            "H100 SXM: 989 TFLOPS ÷ 3,350 GB/s ≈ 295 FLOP/B",
            {"peak_tflops": "989", "bandwidth_gbs": "3350"},
            "ridge_flop_per_byte",
            "295.2 FLOP/B",
        ),
        WorkedExample(
            "H200 SXM: 989 TFLOPS ÷ 4,800 GB/s ≈ 206 FLOP/B",
            {"bandwidth_gbs": "4800"},
            "ridge_flop_per_byte",
            "206 FLOP/B",
        ),
    ),
)

"""Roofline: is decoding limited by memory or by compute? (lessons 00, 04, 12)

Arithmetic intensity in FLOP per byte of weights read: one decode step reads every weight
once and does a multiply and an add with it (2 FLOP) for each sequence in the batch. Below the
hardware's ridge point (peak FLOP/s ÷ bandwidth) the bandwidth is the limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..calculator import Calculator, OutputSpec, Params, WorkedExample
from ..chart import BLUE, Figure, Series, layout, line, these_settings
from ..params import Param
from .decode_ceiling import BANDWIDTH_GBS, PARAMS_B

FLOP_PER_WEIGHT = 2  # one multiply and one add per weight per token
MEMORY = "memory"
COMPUTE = "compute"


def _compute(p: Params) -> dict[str, float | str]:
    peak = p["peak_tflops"] * 1e12
    bandwidth = p["bandwidth_gbs"] * 1e9
    ridge = peak / bandwidth
    intensity = FLOP_PER_WEIGHT * p["batch"] / p["bytes_per_weight"]
    attainable = min(peak, bandwidth * intensity)
    flop_per_token = FLOP_PER_WEIGHT * p["params_b"] * 1e9
    return {
        "ridge_flop_per_byte": ridge,
        "decode_flop_per_byte": intensity,
        "bound": MEMORY if intensity < ridge else COMPUTE,
        "attainable_tflops": attainable / 1e12,
        "attainable_tok_s": attainable / flop_per_token,
        "ridge_batch": ridge * p["bytes_per_weight"] / FLOP_PER_WEIGHT,
    }


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    peak, bandwidth = p["peak_tflops"], p["bandwidth_gbs"] / 1000
    xs = [2 ** (n / 4) for n in range(-8, 60)]
    result = CALCULATOR.run(p)
    data = [
        line("attainable TFLOP/s", xs, [min(peak, bandwidth * x) for x in xs], BLUE),
        these_settings(result.value("decode_flop_per_byte"), result.value("attainable_tflops")),
    ]
    described = layout("arithmetic intensity (FLOP per byte, log)", "TFLOP/s (log)")
    described["xaxis"]["type"] = "log"
    described["yaxis"] = {"title": {"text": "TFLOP/s (log)"}, "type": "log"}
    return {"data": data, "layout": described}


CALCULATOR = Calculator(
    name="roofline",
    order=60,
    title="Roofline: memory-bound or compute-bound",
    lessons=("00", "04", "12"),
    meaning=(
        "Decoding one sequence does about one multiply-add per byte of weights read, far below "
        "what a GPU's compute could use, so it waits on memory until the batch is large enough "
        "to reach the ridge point."
    ),
    params=(
        Param(
            "peak_tflops",
            "float",
            989.0,
            "Peak dense compute from the spec sheet (H100 SXM, BF16: 989).",
            "TFLOP/s",
            label="peak compute",
            low=0.001,
            high=1_000_000,
        ),
        replace(
            BANDWIDTH_GBS, default=3350.0, help="Memory bandwidth from the spec sheet (H100 SXM: 3,350)."
        ),
        Param(
            "batch", "int", 1, "Sequences decoded together in one step.", "sequences", low=1, high=1_000_000
        ),
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
    ),
    outputs=(
        OutputSpec("ridge_flop_per_byte", "FLOP/B", "ridge point"),
        OutputSpec("decode_flop_per_byte", "FLOP/B", "decode's arithmetic intensity"),
        OutputSpec("bound", "", "the limit"),
        OutputSpec("attainable_tflops", "TFLOP/s", "attainable compute"),
        OutputSpec("attainable_tok_s", "tok/s", "attainable tokens per second, whole batch"),
        OutputSpec("ridge_batch", "sequences", "batch where compute becomes the limit"),
    ),
    compute=_compute,
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

"""Roofline: is decoding limited by memory or by compute? (lessons 00, 04, 12)

Arithmetic intensity in FLOP per byte of weights read: one decode step reads every weight
once and does a multiply and an add with it (2 FLOP) for each sequence in the batch. Below the
hardware's ridge point (peak FLOP/s ÷ bandwidth) the bandwidth is the limit.
"""

from __future__ import annotations

from dataclasses import replace

from ..calculator import Calculator, OutputSpec, Params
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


CALCULATOR = Calculator(
    name="roofline",
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
)

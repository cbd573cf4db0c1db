"""The settings a decode step on one machine is priced from, shared by the ceiling calculators
(decode-ceiling, roofline): the bandwidth, peaks and memory, the model's sizes, the batch and its
context; and what is read from them: the active parameters, the bits a weight is stored in (typed,
a quantization's, or a published file's own), and the peak at that precision. Pure Python: no
Django.
"""

from __future__ import annotations

from ..core.calculator import Params, require
from ..core.params import Param
from ..models.model_params import stored_weights_gb
from .hardware import dense_peak
from .model_reads import weights_read_b, with_model_sizes

# Bits per weight of the course's quantizations, scales included (lesson 04).
QUANT_BITS = {"f16": 16.0, "q8_0": 8.5, "q4_k_m": 4.8, "q3_k_m": 3.9}
# A chosen model's own file, each tensor at the precision its config states: a mixed file (gpt-oss:
# 4-bit experts, 16-bit attention and output head) reads more bytes a token than its average bits
# spread over the active parameters would.
PUBLISHED = "published"

# Minimums above zero rather than "greater than 0": the formulas divide by these, and a value such
# as 5e-324 is greater than 0 yet rounds a quotient to zero or infinity.
BANDWIDTH_GBS = Param(
    "bandwidth_gbs",
    "float",
    546.0,
    "Memory bandwidth from the spec sheet (M4 Max with the 40-core GPU: 546).",
    "GB/s",
    label="memory bandwidth",
    low=0.1,
    high=100_000,
)
PARAMS_B = Param(
    "params_b",
    "float",
    8.0,
    "Parameters the model holds, in billions (MoE: all experts); with a model chosen or pasted, its own.",
    "B",
    label="parameters",
    low=0.001,
    high=100_000,
)

ACTIVE_PARAMS_B = Param(
    "active_params_b",
    "float",
    None,
    "Parameters read per token, in billions (MoE: the active experts); empty = all of them; with a model chosen or pasted, its own.",
    "B",
    label="active parameters",
    low=0.001,
    high=100_000,
    optional=True,
)
BATCH = Param(
    "batch", "int", 1, "Sequences decoded together in one step.", "sequences", low=1, high=1_000_000
)
CONTEXT_TOKENS = Param(
    "context_tokens",
    "int",
    0,
    "Tokens of context each sequence holds; its KV cache is read at every step (0 = weights alone).",
    "tokens",
    label="context",
    low=0,
    high=10_000_000,
)
KV_BYTES_PER_TOKEN = Param(
    "kv_bytes_per_token",
    "float",
    131_072.0,
    "KV cache bytes per token of context (Llama-3.1-8B at 16 bits: 131,072); with a model chosen or pasted, its own at this context.",
    "B",
    label="KV bytes per token",
    low=0,
    high=1e9,
)
MEMORY_UTILIZATION = Param(
    "memory_utilization",
    "float",
    0.9,
    "Share of the memory the engine may use (vLLM's gpu_memory_utilization).",
    label="memory share",
    low=0,
    low_open=True,
    high=1,
)
OVERHEAD_GB = Param(
    "overhead_gb",
    "float",
    2.0,
    "Memory besides weights and KV cache: activations, CUDA graphs, the runtime.",
    "GB",
    label="overhead",
    low=0,
    high=1_000_000,
)


MEASURED_CALIBRATION = Param(
    "calibration",
    "text",
    None,
    "Your GPU's measurements (what tools/measure_gpu.py writes): its measured bandwidth and FLOP/s "
    "replace the typed ones, a ceiling at what the GPU achieves.",
    label="calibration file",
    optional=True,
    max_chars=100_000,
)
PEAK_TFLOPS = Param(
    "peak_tflops",
    "float",
    None,
    "Peak dense BF16 compute from the spec sheet, without sparsity (H100 SXM: 989); empty = "
    "no compute check (Apple publishes none for its Macs).",
    "TFLOP/s",
    label="peak compute",
    low=0.001,
    high=1_000_000,
    optional=True,
)
PEAK_FP8_TFLOPS = Param(
    "peak_fp8_tflops",
    "float",
    None,
    "Peak dense FP8 compute, without sparsity (H100 SXM: 1,979), for weights of 1 byte or fewer; "
    "empty = the BF16 peak at every precision.",
    "TFLOP/s",
    label="peak FP8 compute",
    low=0.001,
    high=1_000_000,
    optional=True,
)


def active_b(p: Params) -> float:
    return p["active_params_b"] if p["active_params_b"] is not None else p["params_b"]


def published_weights(p: Params) -> tuple[float, float] | None:
    """(GB held, GB a step reads) of the chosen model's file as published, when the quantization
    asks for it and no bits per weight are typed; None otherwise. ``p`` with the model's sizes."""
    if p["quant"] != PUBLISHED or p["bits_per_weight"] is not None:
        return None
    return stored_weights_gb(p, weights_read_b(p, active_b(p)))


def bits_per_weight(p: Params) -> float:
    """The bits per weight typed, the quantization's, or the published file's average."""
    if p["bits_per_weight"] is not None:
        return p["bits_per_weight"]
    if p["quant"] == PUBLISHED:
        stored = published_weights(p)
        assert stored is not None, "refused by _check"
        return stored[0] * 1e9 * 8 / (p["params_b"] * 1e9)
    return QUANT_BITS[p["quant"]]


def check_model_sizes(p: Params) -> None:
    """The model's sizes as the step reads them (roofline checks the same)."""
    p = with_model_sizes(p)  # a pasted config that cannot be read is refused here, naming the field
    if p["active_params_b"] is not None:
        require(
            p["active_params_b"] <= p["params_b"],
            "active_params_b",
            f"active_params_b must be at most params_b ({p['params_b']:g})",
        )


def decode_peak_tflops(p: Params) -> float | None:
    """The dense peak at these weights' precision (the FP8 peak for 8 bits or fewer, when given);
    None when no peak is given."""
    return dense_peak(bits_per_weight(p) / 8, p.get("peak_tflops"), p.get("peak_fp8_tflops"))

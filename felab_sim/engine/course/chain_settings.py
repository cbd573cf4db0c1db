"""The chain's settings: what ``walk`` takes (its ``Param`` declarations and their defaults, the
capstone's scenario), the GPU they describe, and their checking before any step is walked.

The web form, ``manage.py chain`` and the links between the serving pages are generated from
``PARAMS``; felab_sim/engine/course/chain.py walks the steps. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..calculators import CALCULATORS
from ..calculators.step_time import BANDWIDTH_GBS, PEAK_TFLOPS, TENSOR_PARALLEL
from ..core.params import Param, ParamError, ParamValue, parse_all
from ..hardware.hardware import GB, HARDWARE, TERA, Hardware, hardware_preset
from ..hardware.prices import price
from ..models.model_kv_cache import kv_heads_per_gpu
from ..models.model_params import CONFIG_CHARS, shape_of
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from ..models.precisions import PRECISION_LABELS, PRECISIONS
from ..serving import serving_defaults

CUSTOM = "custom"
# The KV cache's type, bytes per value, and the kv-cache calculator's name for the same size.
KV_DTYPES = {"bf16": 2.0, "fp8": 1.0}
KV_DTYPE_LABELS = {"bf16": "BF16 (2 bytes)", "fp8": "FP8 (1 byte)"}
KV_CALCULATOR_DTYPE = {"bf16": "f16", "fp8": "fp8"}  # f16 and bf16 are both 2 bytes a value

# Defaults: the capstone's scenario (lesson 15's example flags: peak concurrency 200,
# 5e6 tickets a month, SLO 800 ms, serverless $0.15 in / $0.60 out per 1M tokens, $8 a
# GPU-hour) with lesson 15's worked ticket (300 tokens in, 50 out, as the sizing calculator
# has it), on the drill's question "70B on one GPU?": Llama-3.1-70B (model_presets.py, its
# config.json on Hugging Face) on one H100 SXM (hardware.py, NVIDIA's datasheet) at FP8.
DEFAULT_MODEL = serving_defaults.MODEL
DEFAULT_HARDWARE = serving_defaults.HARDWARE

PARAMS: tuple[Param, ...] = (
    Param(
        "model",
        "choice",
        DEFAULT_MODEL,
        "A published model's shape (its config.json); a pasted config below wins over it.",
        choices={name: name for name in MODEL_PRESETS},
    ),
    Param(
        "model_config",
        "text",
        None,
        "A Hugging Face config.json pasted whole; it sets the layers, heads, experts and attention kinds.",
        label="config.json",
        optional=True,
        max_chars=CONFIG_CHARS,
    ),
    Param(
        "precision",
        "choice",
        serving_defaults.PRECISION,
        "The weights' precision: bytes per weight, and the tensor cores' peak used.",
        # One size for every weight: MXFP4 (experts only on a mixture) is the engine's and step-time's.
        choices={name: PRECISION_LABELS[name] for name in ("bf16", "fp8")},
    ),
    Param(
        "kv_dtype",
        "choice",
        serving_defaults.KV_DTYPE,
        "How the KV cache stores each value (vLLM's auto: the model's 16 bits; kv_cache_dtype=fp8: 1 byte).",
        label="KV cache type",
        choices=KV_DTYPE_LABELS,
    ),
    TENSOR_PARALLEL,
    Param(
        "hardware",
        "choice",
        DEFAULT_HARDWARE,
        "One GPU's preset from its vendor's spec sheet, or custom: typed in below.",
        choices={**{h.name: h.vendor_name for h in HARDWARE}, CUSTOM: "custom (typed in)"},
    ),
    Param(
        "memory_gb",
        "float",
        None,
        "Memory of one GPU, 10⁹ bytes (empty: the preset's).",
        "GB",
        label="GPU memory",
        low=0.1,
        high=100_000,
        optional=True,
    ),
    BANDWIDTH_GBS,
    PEAK_TFLOPS,
    Param(
        "memory_utilization",
        "float",
        serving_defaults.GPU_MEMORY_UTILIZATION,
        "Share of the memory the engine may use (vLLM's gpu_memory_utilization, default 0.9).",
        label="memory share",
        low=0.01,
        high=1,
    ),
    Param(
        "overhead_gb",
        "float",
        2.0,
        "Memory besides weights and KV on each GPU: activations, CUDA graphs, the runtime.",
        "GB",
        label="overhead",
        low=0,
        high=10_000,
    ),
    Param(
        "max_num_seqs",
        "int",
        serving_defaults.MAX_NUM_SEQS,
        "Most conversations one replica runs at once (vLLM's max_num_seqs; 256 as the engine page).",
        "conversations",
        label="max running",
        low=1,
        high=4096,
    ),
    Param(
        "peak_users",
        "int",
        200,
        "Users in a conversation at the same moment, at peak (the capstone: 200).",
        "users",
        label="peak users",
        low=1,
        high=100_000_000,
    ),
    Param(
        "prompt_tokens",
        "int",
        serving_defaults.PROMPT_TOKENS,
        "Prompt tokens of each conversation (lesson 15's ticket: 300).",
        "tokens",
        label="prompt",
        low=1,
        high=1_000_000,
    ),
    Param(
        "reply_tokens",
        "int",
        serving_defaults.REPLY_TOKENS,
        "Tokens of each reply (lesson 15's ticket: 50).",
        "tokens",
        label="reply",
        low=1,
        high=1_000_000,
    ),
    Param(
        "slo_ms",
        "float",
        800.0,
        "Longest time to first token a user may wait (the capstone: 800 ms; lesson 03's SLO is on TTFT).",
        "ms",
        label="TTFT SLO",
        low=1,
        high=10_000_000,
    ),
    Param("headroom", "float", 0.2, "Spare capacity on top of peak, as a share (0.2 = 20%).", low=0, high=10),
    Param(
        "gpu_hour_usd",
        "float",
        price("dedicated-gpu-hour").usd,
        "Price of one GPU-hour, dedicated (the capstone: $8).",
        "$/h",
        label="GPU-hour price",
        low=0,
        high=1_500,  # × 64 GPUs a replica stays within the sizing calculator's $100,000 an hour
    ),
    CALCULATORS["sizing"].param("hours"),  # the chain's month is the sizing calculator's
    Param(
        "input_usd_per_m",
        "float",
        price("capstone-serverless-input").usd,
        "Serverless price of prompt tokens (the capstone: $0.15).",
        "$/M tokens",
        label="serverless input price",
        low=0,
        high=100_000,
    ),
    Param(
        "output_usd_per_m",
        "float",
        price("capstone-serverless-output").usd,
        "Serverless price of reply tokens (the capstone: $0.60).",
        "$/M tokens",
        label="serverless output price",
        low=0,
        high=100_000,
    ),
    Param(
        "tickets_per_month",
        "int",
        5_000_000,
        "Conversations (tickets) a month (the capstone: 5 million).",
        "tickets",
        label="tickets a month",
        low=0,
        high=1_000_000_000_000,
    ),
)
PARAM_NAMES = tuple(param.name for param in PARAMS)
DEFAULTS: dict[str, ParamValue] = {param.name: param.default for param in PARAMS}


def chain_hardware(p: Mapping[str, ParamValue]) -> Hardware:
    """The preset with any typed-in figure in its place, or a GPU typed in whole."""
    memory, bandwidth, peak = (p[name] for name in ("memory_gb", "bandwidth_gbs", "peak_tflops"))
    if p["hardware"] == CUSTOM:
        for name in ("memory_gb", "bandwidth_gbs", "peak_tflops"):
            if p[name] is None:
                raise ParamError(name, f"{name} must be typed in for custom hardware (or choose a preset)")
        base = replace(hardware_preset(DEFAULT_HARDWARE), name=CUSTOM, vendor_name="typed-in GPU")
    else:
        base = hardware_preset(str(p["hardware"]))
    changes: dict[str, object] = {}
    if memory is not None:
        changes |= {"memory_gb": memory, "memory_unit": "GB", "memory_bytes": round(float(memory) * GB)}
    if bandwidth is not None:
        changes["memory_bandwidth"] = float(bandwidth) * GB
    if peak is not None:
        flops = float(peak) * TERA  # at the weights' precision, so both rates are set to it
        changes |= {"bf16_flops": flops, "fp8_flops": flops}
    return replace(base, **changes) if changes else base


def peak_flops(hardware: Hardware, bytes_per_weight: float) -> float:
    try:
        return hardware.peak_flops(bytes_per_weight)
    except ValueError:
        raise ParamError(
            "peak_tflops",
            f"peak_tflops must be typed in: {hardware.vendor_name} has no published dense peak",
        ) from None


def validate(raw: Mapping[str, object]) -> dict[str, ParamValue]:
    """Every setting checked, defaults filled in; ``ParamError`` naming the first bad one."""
    values = parse_all(PARAMS, raw, owner="the chain")
    shape = shape_of(values)
    try:
        kv_heads_per_gpu(shape, int(values["tensor_parallel"]))  # type: ignore[arg-type]
    except ValueError as error:
        if shape.mla is None:
            said = str(error)  # "tensor_parallel 3 does not divide ...": led by the setting already
            raise ParamError(
                "tensor_parallel", said if said.startswith("tensor_parallel ") else f"tensor_parallel: {said}"
            ) from None
    peak_flops(chain_hardware(values), PRECISIONS[str(values["precision"])])
    return values

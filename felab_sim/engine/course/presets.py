"""Presets for the calculator pages: hardware from public spec sheets, and model shapes.

A preset sets some parameters; a calculator's page offers it when it sets at least one of that
calculator's parameters, and applies only those. Hardware numbers are the vendors' published
ones (peak compute: dense BF16, without sparsity), each with the page it comes from; model
shapes are the ones the course uses (lessons 05, 12, 17).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.calculator import Calculator
from ..core.params import ParamValue
from ..hardware.hardware import Hardware, hardware_preset


@dataclass(frozen=True)
class Preset:
    name: str
    kind: str  # "hardware" or "model"
    values: Mapping[str, ParamValue]
    source: str = ""
    note: str = ""
    applies_to: tuple[str, ...] = field(default=())  # calculator names; empty = any that shares a parameter

    def for_calculator(self, calculator: Calculator) -> dict[str, ParamValue]:
        if self.applies_to and calculator.name not in self.applies_to:
            return {}
        names = {param.name for param in calculator.params}
        return {name: value for name, value in self.values.items() if name in names}


# Every hardware preset is an entry of the one hardware table (engine/hardware/hardware.py), with its
# source: bandwidth, dense BF16 and FP8 compute where the vendor publishes them, memory in 10⁹ bytes.
PRESET_ORDER = (
    "m4",
    "m4-pro",
    "m4-max-32c",
    "m4-max-40c",
    "m3-ultra",
    "dgx-spark",
    "rtx-4090",
    "rtx-pro-6000",
    "l40s",
    "a100-80gb",
    "h100-pcie",
    "h100-sxm",
    "h200",
    "b200",
    "mi300x",
)
NOTES = {
    "m4-pro": "The same bandwidth as the DGX Spark.",
    "m4-max-32c": "The course's 36 GB Mac (lesson 00).",
    "m4-max-40c": "Lesson 04's machine.",
    "dgx-spark": "Lesson 14's box: 128 GB shared with the CPU.",
}
# Shared with the CPU and the OS: the share of memory stays as entered (lesson 00's 70% on a Mac).
UNIFIED_MEMORY = {"dgx-spark", "m4", "m4-pro", "m4-max-32c", "m4-max-40c", "m3-ultra"}


def gpu_preset(name: str, note: str = "") -> Preset:
    """The calculators' settings for one entry of the hardware table; on a GPU of its own the
    share of memory an engine may use is vLLM's default gpu_memory_utilization, 0.9."""
    hardware: Hardware = hardware_preset(name)
    memory_gb = round(hardware.memory_bytes / 1e9, 1)
    values: dict[str, ParamValue] = {
        "bandwidth_gbs": hardware.memory_bandwidth / 1e9,
        "ram_gb": memory_gb,
        "memory_gb": memory_gb,
    }
    if name not in UNIFIED_MEMORY:
        values["memory_utilization"] = 0.9
    if hardware.bf16_flops is not None:
        values["peak_tflops"] = round(hardware.bf16_flops / 1e12, 1)
    if hardware.fp8_flops is not None:
        values["peak_fp8_tflops"] = round(hardware.fp8_flops / 1e12, 1)
    memory = f"{hardware.memory_gb:g} {hardware.memory_unit}"
    return Preset(hardware.vendor_name, "hardware", values, hardware.source.split(" ")[0], note or memory)


HARDWARE = tuple(gpu_preset(name, NOTES.get(name, "")) for name in PRESET_ORDER)

MODELS = (
    Preset(
        "Llama-3.1-8B",
        "model",
        {
            "params_b": 8.0,
            "active_params_b": None,
            "layers": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "hidden": 4096,
            "heads": 32,
            "mlp_hidden": 14336,
            "vocab": 128256,
            "tied_embeddings": False,
        },
    ),
    Preset(
        "Llama-3.1-70B",
        "model",
        {
            "params_b": 70.6,
            "active_params_b": None,
            "layers": 80,
            "kv_heads": 8,
            "head_dim": 128,
            "hidden": 8192,
            "heads": 64,
            "mlp_hidden": 28672,
            "vocab": 128256,
            "tied_embeddings": False,
        },
    ),
    Preset(
        "Qwen2.5-7B",
        "model",
        {
            "params_b": 7.6,
            "active_params_b": None,
            "layers": 28,
            "kv_heads": 4,
            "head_dim": 128,
            "hidden": 3584,
            "heads": 28,
            "mlp_hidden": 18944,
            "vocab": 152064,
            "tied_embeddings": False,
        },
    ),
    Preset(
        "Qwen2.5-0.5B",
        "model",
        {
            "params_b": 0.49,
            "active_params_b": None,
            "layers": 24,
            "kv_heads": 2,
            "head_dim": 64,
            "hidden": 896,
            "heads": 14,
            "mlp_hidden": 4864,
            "vocab": 151936,
            "tied_embeddings": True,
        },
    ),
    Preset("Mistral-7B", "model", {"layers": 32, "kv_heads": 8, "head_dim": 128}, applies_to=("kv-cache",)),
    Preset(
        "gpt-oss-20b (MoE)",
        "model",
        {"params_b": 21.0, "active_params_b": 3.6, "layers": 24, "kv_heads": 8, "head_dim": 64},
        applies_to=("kv-cache", "decode-ceiling"),
    ),
    Preset(
        "qwen3:30b-a3b (MoE)",
        "model",
        {"params_b": 30.5, "active_params_b": 3.3},
        applies_to=("decode-ceiling",),
    ),
    Preset(
        "gpt-oss-120b (MoE)",
        "model",
        {"params_b": 117.0, "active_params_b": 5.1},
        applies_to=("decode-ceiling",),
    ),
)


def presets_for(calculator: Calculator) -> list[tuple[Preset, dict[str, ParamValue]]]:
    """The presets that set some of this calculator's parameters, each with the values it sets."""
    found = []
    for preset in HARDWARE + MODELS:
        values = preset.for_calculator(calculator)
        # A preset that only clears an optional value (active_params_b) teaches nothing here.
        if any(value is not None for value in values.values()):
            found.append((preset, values))
    return found

"""KV cache: memory per token, per conversation and for many users (lessons 05, 14).

Lesson 05's formulas. Every token of context keeps a key and a value vector per layer and KV
head. GB are 10⁹ bytes; the course also quotes KiB and MiB (2¹⁰, 2²⁰), given as extra outputs.
"""

from __future__ import annotations

import math

from ..calculator import Calculator, OutputSpec, Params
from ..params import Param

# Bytes per stored value; llama.cpp's block formats carry a small scale overhead.
KV_DTYPE_BYTES = {"f16": 2.0, "q8_0": 1.0625, "q4_0": 0.5625, "fp8": 1.0}
KV_DTYPE_LABELS = {
    "f16": "f16 (2 bytes)",
    "q8_0": "q8_0 (1.0625 bytes)",
    "q4_0": "q4_0 (0.5625 bytes)",
    "fp8": "fp8 (1 byte)",
}
GB = 1e9
KIB = 1024
MIB = 1024**2


def _compute(p: Params) -> dict[str, float]:
    per_token = 2 * p["layers"] * p["kv_heads"] * p["head_dim"] * KV_DTYPE_BYTES[p["kv_dtype"]]
    per_conversation = per_token * p["context_tokens"]
    return {
        "kv_bytes_per_token": per_token,
        "kv_kib_per_token": per_token / KIB,
        "kv_gb_per_conversation": per_conversation / GB,
        "kv_mib_per_conversation": per_conversation / MIB,
        "kv_gb_total": per_conversation * p["users"] / GB,
        # A small tolerance so 18 GiB ÷ 1 GiB is 18, not 17 after rounding error.
        "max_conversations": math.floor(p["free_gb"] * GB / per_conversation + 1e-9),
    }


CALCULATOR = Calculator(
    name="kv-cache",
    title="KV cache: memory per token, conversation and user",
    lessons=("05", "14"),
    meaning=(
        "Every token a conversation keeps costs memory in every layer, so the cache grows in a "
        "straight line with context and users, and it, not the weights, usually runs out first."
    ),
    params=(
        Param("layers", "int", 32, "Transformer layers (Llama-3.1-8B: 32).", low=1, high=1000),
        Param(
            "kv_heads",
            "int",
            8,
            "Key/value heads per layer (grouped-query attention shares them; Llama-3.1-8B: 8).",
            label="KV heads",
            low=1,
            high=1000,
        ),
        Param(
            "head_dim",
            "int",
            128,
            "Values per head (Llama-3.1-8B: 128).",
            label="head size",
            low=1,
            high=100_000,
        ),
        Param(
            "kv_dtype",
            "choice",
            "f16",
            "How each cached value is stored.",
            label="cache type",
            choices=KV_DTYPE_LABELS,
        ),
        Param(
            "context_tokens",
            "int",
            8192,
            "Tokens of context each conversation may hold.",
            "tokens",
            label="context",
            low=1,
            high=100_000_000,
        ),
        Param("users", "int", 1, "Conversations held at once.", low=1, high=10_000_000),
        Param(
            "free_gb",
            "float",
            20.0,
            "Memory left for the cache after the weights.",
            "GB",
            label="free memory",
            low=0,
            high=10_000_000,
        ),
    ),
    outputs=(
        OutputSpec("kv_bytes_per_token", "B", "per token"),
        OutputSpec("kv_kib_per_token", "KiB", "per token"),
        OutputSpec("kv_gb_per_conversation", "GB", "per conversation"),
        OutputSpec("kv_mib_per_conversation", "MiB", "per conversation"),
        OutputSpec("kv_gb_total", "GB", "for all users"),
        OutputSpec("max_conversations", "conversations", "full-length conversations that fit"),
    ),
    compute=_compute,
)

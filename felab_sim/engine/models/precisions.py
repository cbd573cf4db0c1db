"""Weight precisions a serving engine runs at: the one list the engine, the chain and step-time
offer, and what each stores a weight in.

- **bf16**: 2 bytes a weight, the tensor cores' BF16 peak.
- **fp8**: 1 byte a weight (E4M3), the FP8 peak. Where the model's config.json gives a
  ``weight_block_size`` (DeepSeek-V3/R1: 128 × 128), each block of weights also carries one FP32
  scale, 4 bytes ÷ 16,384 weights, and every FP8 product first quantizes its input activations per
  group of 128 (a small kernel of its own): :func:`scale_bytes_per_weight`.
- **mxfp4** (the OCP microscaling format): 4-bit values and one 8-bit scale per 32, (32 × 4 + 8)
  ÷ 32 ÷ 8 = 0.53125 bytes a weight, for the matrices gpt-oss's checkpoints convert: a mixture's
  routed experts (attention, router, embeddings and output head stay BF16, as its
  quantization_config's modules_to_not_convert lists them); on a dense model every linear layer
  (the tables stay BF16). Hopper has no 4-bit tensor cores: the products dequantize to BF16 inside
  the kernel and run at the BF16 peak (W4A16).

The engine's settings carry a precision as its bytes a weight (``PRECISIONS``); :func:`weight_format`
turns those bytes back into the format. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model_shapes import BF16_BYTES, MXFP4_BYTES_PER_WEIGHT

FP8_BYTES = 1.0
# One FP32 scale per 128 × 128 block (DeepSeek-V3's config: weight_block_size [128, 128]).
BLOCK_SCALE_BYTES = 4.0


@dataclass(frozen=True)
class WeightFormat:
    """How a precision stores weights: the converted matrices' bytes a weight (scales included),
    and what stays BF16."""

    name: str
    matrix_bytes: float  # a converted weight, its share of the block scale included
    experts_only: bool  # on a mixture of experts, only the routed experts are converted
    tables_bf16: bool  # the embedding table and output head stay BF16


FORMATS = {
    "bf16": WeightFormat("bf16", BF16_BYTES, False, False),
    "fp8": WeightFormat("fp8", FP8_BYTES, False, False),
    "mxfp4": WeightFormat("mxfp4", MXFP4_BYTES_PER_WEIGHT, True, True),
}
PRECISIONS = {name: f.matrix_bytes for name, f in FORMATS.items()}
PRECISION_LABELS = {
    "bf16": "BF16 (2 bytes)",
    "fp8": "FP8 (1 byte)",
    "mxfp4": "MXFP4 (0.53 bytes)",
}


def weight_format(bytes_per_param: float) -> WeightFormat:
    """The format whose bytes a weight these are; any other size: every weight at that size."""
    for found in FORMATS.values():
        if found.matrix_bytes == bytes_per_param:
            return found
    return WeightFormat(f"{bytes_per_param:g} bytes", bytes_per_param, False, False)


def scale_bytes_per_weight(format_: WeightFormat, weight_block: int | None) -> float:
    """FP8 with block scales: one FP32 scale per weight_block² weights; else none (MXFP4's scale is
    in its bytes already, and FP8 without a block size has one scale a tensor)."""
    if format_.name != "fp8" or not weight_block:
        return 0.0
    return BLOCK_SCALE_BYTES / (weight_block * weight_block)

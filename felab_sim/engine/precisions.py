"""Weight precisions a serving engine runs at, bytes per weight: the one list the engine, the chain
and step-time offer. 4-bit formats are left out: their compute runs at a rate no spec sheet prints
(dequantised to BF16 inside the kernel). Pure Python."""

from __future__ import annotations

PRECISIONS = {"bf16": 2.0, "fp8": 1.0}
PRECISION_LABELS = {"bf16": "BF16 (2 bytes)", "fp8": "FP8 (1 byte)"}

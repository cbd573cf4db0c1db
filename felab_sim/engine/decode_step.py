"""One decode step's time: the longer of reading its bytes and doing its arithmetic.

A decode step reads every active weight once for the whole batch and every sequence's KV cache,
and does a multiply and an add with each active weight (2 FLOP) for each sequence. Its time is
the larger of memory time (bytes ÷ bandwidth) and compute time (FLOP ÷ peak), as llm-analysis
times each layer; which of the two is larger is the bound. decode-ceiling and roofline both
time their steps here. Pure Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

FLOP_PER_WEIGHT = 2  # one multiply and one add per weight per token
MEMORY = "memory"
COMPUTE = "compute"


@dataclass(frozen=True)
class DecodeStep:
    bytes_read: float
    flop: float
    memory_s: float
    compute_s: float | None  # None: no peak compute given, so only the memory time is known

    @property
    def seconds(self) -> float:
        return self.memory_s if self.compute_s is None else max(self.memory_s, self.compute_s)

    @property
    def bound(self) -> str | None:
        """ "memory" or "compute", whichever takes longer (a tie is memory's); None without a peak."""
        if self.compute_s is None:
            return None
        return MEMORY if self.memory_s >= self.compute_s else COMPUTE


def decode_step(
    *,
    weight_bytes: float,
    kv_bytes: float,
    active_params: float,
    batch: int,
    bandwidth: float,
    peak_flops: float | None,
) -> DecodeStep:
    """Time one step of ``batch`` sequences: bandwidth in bytes/s, peak in FLOP/s (or None)."""
    step_bytes = weight_bytes + kv_bytes
    flop = FLOP_PER_WEIGHT * active_params * batch
    return DecodeStep(
        bytes_read=step_bytes,
        flop=flop,
        memory_s=step_bytes / bandwidth,
        compute_s=None if peak_flops is None else flop / peak_flops,
    )

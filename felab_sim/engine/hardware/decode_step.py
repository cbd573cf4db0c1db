"""One decode step's time at a spec sheet's figures: felab_sim/engine/hardware/step_cost.py's one function
for sizes typed in (decode-ceiling and roofline time their steps here).

A decode step reads every active weight once for the whole batch and every sequence's KV cache,
and does a multiply and an add with each active weight (2 FLOP) for each sequence. Its time is
the larger of memory time (bytes ÷ bandwidth) and compute time (FLOP ÷ peak), as llm-analysis
times each layer, plus the step's fixed cost (none at the spec sheet: a ceiling); which of the
two is larger is the bound. Pure Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import Hardware, Interconnect
from .model_cost import typed_cost
from .step_cost import SPEC_SHEET, step_cost
from .step_load import StepLoad

FLOP_PER_WEIGHT = 2  # one multiply and one add per weight per token
MEMORY = "memory"
COMPUTE = "compute"
UNKNOWN_PEAK = 1e40  # FLOP/s standing for "no peak given": its compute time is not reported


@dataclass(frozen=True)
class DecodeStep:
    bytes_read: float
    flop: float
    memory_s: float
    compute_s: float | None  # None: no peak compute given, so only the memory time is known
    fixed_s: float = 0.0  # the step's fixed cost (none at the spec sheet)

    @property
    def seconds(self) -> float:
        rooflined = self.memory_s if self.compute_s is None else max(self.memory_s, self.compute_s)
        return rooflined + self.fixed_s

    @property
    def bound(self) -> str | None:
        """ "memory" or "compute", whichever takes longer (a tie is memory's); None without a peak."""
        if self.compute_s is None:
            return None
        return MEMORY if self.memory_s >= self.compute_s else COMPUTE


def spec_hardware(bandwidth: float, peak_flops: float | None) -> Hardware:
    """A GPU known only by the figures typed into a calculator."""
    return Hardware(
        "typed",
        "typed-in figures",
        memory_gb=0,
        memory_unit="GB",
        memory_bytes=0,
        memory_bandwidth=bandwidth,
        bf16_flops=peak_flops or UNKNOWN_PEAK,
        fp8_flops=None,
        interconnect=Interconnect("none", 1.0, "typed in"),
        source="typed in",
        checked_in="typed in",
    )


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
    cost = typed_cost(active_params, active_params, weight_bytes / active_params, kv_bytes / batch)
    load = StepLoad(batch, batch, batch, 0, 0.0, 0.0)
    step = step_cost(cost, spec_hardware(bandwidth, peak_flops), SPEC_SHEET, load)
    return DecodeStep(
        bytes_read=step.weight_bytes + step.kv_bytes,
        flop=step.linear_flops,
        memory_s=step.weights_s + step.kv_s,
        compute_s=None if peak_flops is None else step.linear_compute_s,
        fixed_s=step.fixed_s + step.link_s,
    )

"""What one engine step costs on the hardware: felab_sim/engine/hardware/step_cost.py's one function,
priced for the engine's batches.

The engine's steps are vLLM's: the GPU's calibration (measured, or the default derived from the
measured GPUs: felab_sim/engine/hardware/calibration.py) with vLLM's own cost a step added.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hardware.calibration import engine_calibration, measured_calibrations
from ..hardware.hardware import Hardware
from ..hardware.model_cost import ModelCost, Parallelism, model_cost
from ..hardware.step_cost import Calibration, StepCost, compute_rates, step_cost, step_parts
from ..hardware.step_load import StepLoad

__all__ = [
    "Calibration",
    "ModelCost",
    "Parallelism",
    "StepLoad",
    "StepPricer",
    "calibration_for",
    "is_measured",
    "model_cost",
]


def calibration_for(hardware: Hardware, text: str | None = None) -> Calibration:
    """The engine's calibration on this GPU: ``text``, a calibration file's contents, if given."""
    return engine_calibration(hardware, text)


def is_measured(hardware_name: str) -> bool:
    return hardware_name in measured_calibrations()


@dataclass(frozen=True)
class StepPricer:
    cost: ModelCost
    hardware: Hardware
    calibration: Calibration
    parallel: Parallelism
    bandwidth: float = field(init=False)
    flops: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "bandwidth", self.hardware.memory_bandwidth * self.calibration.memory_efficiency
        )
        object.__setattr__(self, "flops", self.calibration.flops(self.hardware, self.cost.bytes_per_param))

    def price(self, load: StepLoad, group_tokens: int) -> StepCost:
        return step_cost(self.cost, self.hardware, self.calibration, load, self.parallel, group_tokens)

    def _parts(self, load: StepLoad, group_tokens: int) -> tuple[float, float, float, float, float, float]:
        weights, kv, linear, attention, link, fixed, _ = step_parts(
            self.cost,
            self.hardware,
            self.calibration,
            load,
            self.parallel,
            group_tokens,
            self.bandwidth,
            self.flops,
        )
        linear_rate, attention_rate = compute_rates(self.calibration, self.hardware, self.flops, load.tokens)
        return (
            weights / self.bandwidth,
            linear / linear_rate,
            kv / self.bandwidth,
            attention / attention_rate,
            link,
            fixed,
        )

    def gpu_seconds(self, load: StepLoad, group_tokens: int) -> float:
        """Linear roofline + attention roofline for one GPU of this replica."""
        weights, linear, kv, attention, _, _ = self._parts(load, group_tokens)
        return max(weights, linear) + max(kv, attention)

    def compute_bound(self, load: StepLoad, group_tokens: int) -> bool:
        """Whether this step's arithmetic takes longer than its reads of weights and KV."""
        weights, linear, kv, attention, _, _ = self._parts(load, group_tokens)
        return linear + attention > weights + kv

    def communication_seconds(self, load: StepLoad, group_tokens: int) -> float:
        return self._parts(load, group_tokens)[4]

    def step_seconds(self, load: StepLoad, group_tokens: int) -> float:
        """StepCost.seconds, without building the record."""
        weights, linear, kv, attention, link, fixed = self._parts(load, group_tokens)
        return max(weights, linear) + max(kv, attention) + link + fixed

"""What one engine step costs on the hardware: felab_sim/engine/step_cost.py's one function,
priced for the engine's batches.

The engine's steps are vLLM's: the GPU's calibration (measured, or the default derived from the
measured GPUs: felab_sim/engine/calibration.py) with vLLM's own cost a step added.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..calibration import engine_calibration, measured_calibrations
from ..hardware import Hardware
from ..step_cost import (
    Calibration,
    ModelCost,
    Parallelism,
    StepCost,
    StepLoad,
    model_cost,
    step_cost,
)

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

    def price(self, load: StepLoad, group_tokens: int) -> StepCost:
        return step_cost(self.cost, self.hardware, self.calibration, load, self.parallel, group_tokens)

    def gpu_seconds(self, load: StepLoad, group_tokens: int) -> float:
        """Linear roofline + attention roofline for one GPU of this replica."""
        priced = self.price(load, group_tokens)
        return max(priced.weights_s, priced.linear_compute_s) + max(priced.kv_s, priced.attention_compute_s)

    def compute_bound(self, load: StepLoad, group_tokens: int) -> bool:
        """Whether this step's arithmetic takes longer than its reads of weights and KV."""
        return self.price(load, group_tokens).compute_bound

    def communication_seconds(self, load: StepLoad, group_tokens: int) -> float:
        return self.price(load, group_tokens).link_s

    def step_seconds(self, load: StepLoad, group_tokens: int) -> float:
        return self.price(load, group_tokens).seconds

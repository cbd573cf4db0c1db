"""What a chosen model's decode step reads on a GPU, for the ceiling calculators (decode-ceiling,
roofline): its sizes and a calibration file's measured figures in place of typed ones, and the
weights a mixture of experts' batch touches, priced by the step cost. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.params import ParamValue
from ..models.model_params import decode_sizes, model_chosen, shape_of
from .calibration import with_measured
from .decode_step import spec_hardware
from .model_cost import Parallelism, model_cost
from .step_cost import SPEC_SHEET, step_cost
from .step_load import decode_load


def with_model_sizes(p: Mapping[str, ParamValue]) -> Mapping[str, ParamValue]:
    """The settings with a chosen model's own parameters, active parameters and KV bytes per
    token in place of the typed ones, and a calibration file's measured bandwidth and FLOP/s in
    place of the typed spec (calibration.with_measured); unchanged when neither is given. ``ParamError`` naming
    ``model_config`` when a pasted config cannot be read."""
    p = with_measured(p)
    if not model_chosen(p):
        return p
    sizes = decode_sizes(p)
    return {
        **p,
        "params_b": sizes.params_b,
        "active_params_b": sizes.active_params_b,
        "kv_bytes_per_token": sizes.kv_bytes_per_token,
    }


def weights_read_b(p: Mapping[str, ParamValue], active_params_b: float) -> float:
    """Parameters one decode step of ``batch`` sequences reads, in billions: the active ones, and
    of a chosen mixture of experts every expert the batch's tokens touch (E × (1 − (1 − k/E)^B) a
    layer, felab_sim/engine/hardware/step_cost.py); ``active_params_b`` when no model is chosen."""
    if not model_chosen(p):
        return active_params_b
    shape = shape_of(p)
    if not shape.is_moe:
        return active_params_b
    cost = model_cost(shape, 1.0, 2.0, Parallelism())  # one byte a weight: bytes are weights
    step = step_cost(cost, spec_hardware(1.0, None), SPEC_SHEET, decode_load(int(p["batch"]), 0))  # type: ignore[arg-type]
    return step.weight_bytes / 1e9

"""Why a model's weights do not fit on the chain's GPUs, and what would: the fewest GPUs a
tensor-parallel split may take, FP8 on the same GPUs, or a smaller overhead. The chain's first
step (felab_sim/engine/course/chain.py) says this when it stops. Pure Python: no Django.
"""

from __future__ import annotations

from ..core.calculator import counted, typed
from ..core.numbers import format_with_unit
from ..hardware.hardware import GB
from ..models.model_kv_cache import kv_heads_per_gpu
from ..models.model_shapes import ModelShape
from ..models.model_weights import weight_bytes
from ..models.precisions import PRECISIONS

# Tensor-parallel sizes tried when the model does not fit: the sizes one box's GPUs split into.
TP_SIZES = (1, 2, 4, 8, 16, 32, 64)


def does_not_fit(
    shape: ModelShape, per_weight: float, precision: str, usable: float, overhead: float, tp: int
) -> str:
    """Why not, naming what exceeds (the weights, the overhead, or the two together), and what
    would fit: the fewest GPUs at this precision, FP8 on these, or a smaller overhead."""
    needed = weight_bytes(shape, per_weight).total / GB
    weights = needed / tp
    weights_text = f"{format_with_unit(needed, 'GB')} of weights{f' ÷ {tp} GPUs' if tp > 1 else ''}"
    room = format_with_unit(usable, "GB")
    per_gpu = f" ({format_with_unit(weights, 'GB')} a GPU)" if tp > 1 else ""
    if overhead >= usable:
        reason = f"the {typed(overhead, 'GB')} overhead alone is more than the {room} usable"
    elif weights >= usable:
        reason = f"{weights_text} leave no room in {room}"
    else:
        reason = (
            f"{weights_text}{per_gpu} and the {typed(overhead, 'GB')} "
            f"overhead together are more than the {room} usable"
        )
    hints = []
    if weights < usable:
        hints.append(f"an overhead under {format_with_unit(usable - weights, 'GB')} would")
    smallest = smallest_fitting_tp(shape, per_weight, usable, overhead)
    if smallest is not None and smallest > tp:
        hints.append(f"tensor_parallel {smallest} would ({format_with_unit(needed / smallest, 'GB')} a GPU)")
    if precision != "fp8" and weight_bytes(shape, PRECISIONS["fp8"]).total / GB / tp + overhead < usable:
        hints.append(f"FP8 on {counted(tp, 'GPU')} would ({format_with_unit(needed / 2 / tp, 'GB')} a GPU)")
    return reason + (f"; {' or '.join(hints)}" if hints else "")


def smallest_fitting_tp(
    shape: ModelShape, bytes_per_weight: float, usable: float, overhead: float
) -> int | None:
    """The fewest GPUs (a valid tensor-parallel size) whose share of the weights leaves room."""
    total = weight_bytes(shape, bytes_per_weight).total / GB
    for tp in TP_SIZES:
        try:
            kv_heads_per_gpu(shape, tp)
        except ValueError:
            if shape.mla is None:
                continue
        if total / tp + overhead < usable:
            return tp
    return None

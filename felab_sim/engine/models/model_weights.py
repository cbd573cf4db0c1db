"""A model's weights in bytes: held and read a token at the precision an engine runs them
(:func:`weight_bytes`), and as the published checkpoint stores them, each tensor at the precision
its config's quantization_config states (:func:`stored_bytes`). Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model_shapes import ModelShape


@dataclass(frozen=True)
class WeightBytes:
    total: float  # held in memory
    read_per_token: float  # read by each decode step: the active weights without the input table


def weight_bytes(shape: ModelShape, bytes_per_param: float) -> WeightBytes:
    """The weights' bytes at a precision (2 for BF16, 1 for FP8, 0.5 for 4-bit).

    total = total_params × bytes_per_param;
    read_per_token = active_params_without_embedding × bytes_per_param (dense: the whole model
    less the input embedding table when untied; MoE: only the experts a token is routed to).
    """
    if bytes_per_param <= 0:
        raise ValueError("bytes_per_param must be greater than 0")
    return WeightBytes(
        total=shape.total_params * bytes_per_param,
        read_per_token=shape.active_params_without_embedding * bytes_per_param,
    )


@dataclass(frozen=True)
class StoredBytes:
    """The published checkpoint's weights in bytes, each tensor at its stored precision."""

    total: float  # the file's weights
    shared_per_token: float  # read by every token whatever the routing, input table left out
    per_expert: float  # one routed expert, matrices and biases

    def read_per_token(self, experts_read: float = 0.0) -> float:
        """Bytes a decode step reads when it reads ``experts_read`` routed experts in all (summed
        over the layers) besides the shared weights."""
        return self.shared_per_token + experts_read * self.per_expert


def stored_bytes(shape: ModelShape) -> StoredBytes | None:
    """The checkpoint's bytes as published, tensor by tensor; None when the config does not say.

    total = every expert's matrices × expert_matrix_bytes + the other parameters × other_bytes;
    shared_per_token = (active parameters without the input table − the routed experts a token
    uses) × other_bytes; a routed expert = its matrices × expert_matrix_bytes + its biases ×
    other_bytes. A token of gpt-oss reads mostly BF16 (attention, the output head) and only its
    experts in MXFP4, so its bytes a token are far above active parameters × the file's average.
    """
    precision = shape.stored
    if precision is None:
        return None
    if shape.experts is None:
        per_token = shape.active_params_without_embedding * precision.other_bytes
        return StoredBytes(shape.total_params * precision.other_bytes, per_token, 0.0)
    moe_layers = len(shape.experts.moe_layers)
    matrices = shape.expert_matrix_params()
    per_expert = (
        matrices * precision.expert_matrix_bytes + (shape.expert_params() - matrices) * precision.other_bytes
    )
    all_matrices = moe_layers * shape.experts.routed_experts * matrices
    used = moe_layers * shape.experts.experts_per_token * shape.expert_params()
    return StoredBytes(
        total=all_matrices * precision.expert_matrix_bytes
        + (shape.total_params - all_matrices) * precision.other_bytes,
        shared_per_token=(shape.active_params_without_embedding - used) * precision.other_bytes,
        per_expert=per_expert,
    )

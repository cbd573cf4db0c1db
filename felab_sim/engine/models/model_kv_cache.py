"""The KV cache in bytes, per layer kind: the KV heads each GPU keeps under tensor parallelism,
what one token of context adds to a layer and to the model on one GPU, and one sequence's whole
cache with sliding layers capped at their window (:func:`kv_bytes_for_sequence`). Standard
library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .model_shapes import AttentionKind, LayerAttention, ModelShape


def kv_heads_per_gpu(shape: ModelShape, tensor_parallel: int = 1) -> int:
    """KV heads each GPU stores under tensor parallelism: max(1, KV heads ÷ TP).

    vLLM splits the KV heads across the TP ranks and replicates them when TP exceeds the heads,
    so every GPU holds at least one (vllm-project/vllm, vllm/config/model.py,
    ModelConfig.get_num_kv_heads). A split that leaves heads uneven is refused, as vLLM's
    QKVParallelLinear refuses it.
    """
    if tensor_parallel < 1:
        raise ValueError("tensor_parallel must be at least 1")
    heads = shape.kv_heads
    if tensor_parallel <= heads and heads % tensor_parallel:
        raise ValueError(f"tensor_parallel {tensor_parallel} does not divide the {heads} KV heads")
    if tensor_parallel > heads and tensor_parallel % heads:
        raise ValueError(f"tensor_parallel {tensor_parallel} is not a multiple of the {heads} KV heads")
    return max(1, heads // tensor_parallel)


def kv_bytes_per_token_per_layer(
    shape: ModelShape, layer: LayerAttention, kv_bytes_per_value: float, tensor_parallel: int = 1
) -> float:
    """Bytes one token adds to one layer's cache on one GPU.

    full and sliding: 2 (K and V) × KV heads per GPU × head size × bytes per value;
    MLA: (kv_lora_rank + qk_rope_head_dim) × bytes per value, with no factor 2 and no heads: the
    latent is shared by K and V and by every head, and every TP rank keeps all of it (vLLM caches
    MLA as one head of kv_lora_rank + qk_rope_head_dim values per token with no factor 2:
    vllm-project/vllm, vllm/v1/kv_cache_interface.py, MLAAttentionSpec.real_page_size_bytes; and
    gives it 1 KV head on every GPU: vllm/config/model.py, get_num_kv_heads and get_head_size).
    A sliding layer's cap at its window is applied per sequence (kv_bytes_for_sequence).
    """
    if kv_bytes_per_value <= 0:
        raise ValueError("kv_bytes_per_value must be greater than 0")
    if layer.kind is AttentionKind.MLA:
        assert shape.mla is not None
        if tensor_parallel < 1:
            raise ValueError("tensor_parallel must be at least 1")
        return (shape.mla.kv_lora_rank + shape.mla.qk_rope_head_dim) * kv_bytes_per_value
    return 2 * kv_heads_per_gpu(shape, tensor_parallel) * shape.head_dim * kv_bytes_per_value


def kv_bytes_per_token(
    shape: ModelShape, kv_bytes_per_value: float, tensor_parallel: int = 1
) -> dict[AttentionKind, float]:
    """Bytes one more token of context adds on one GPU, by layer kind (layers of that kind ×
    the per-layer bytes). Sliding layers stop growing once the context passes their window."""
    found: dict[AttentionKind, float] = {}
    for layer in shape.layer_attention:
        per_layer = kv_bytes_per_token_per_layer(shape, layer, kv_bytes_per_value, tensor_parallel)
        found[layer.kind] = found.get(layer.kind, 0.0) + per_layer
    return found


@dataclass(frozen=True)
class KVFootprint:
    per_gpu: float
    total: float  # over the tensor-parallel group: per_gpu × TP (replicated heads counted each time)
    by_kind_per_gpu: Mapping[AttentionKind, float]


def kv_bytes_for_sequence(
    shape: ModelShape, context_tokens: int, kv_bytes_per_value: float, tensor_parallel: int = 1
) -> KVFootprint:
    """The KV cache of one sequence holding ``context_tokens`` tokens.

    Σ over layers of per-token bytes × tokens kept, where a full or MLA layer keeps every token
    and a sliding layer keeps min(context_tokens, window). Per GPU under TP; total = per GPU × TP.
    """
    if context_tokens < 0:
        raise ValueError("context_tokens must be 0 or more")
    by_kind: dict[AttentionKind, float] = {}
    for layer in shape.layer_attention:
        kept = min(context_tokens, layer.window) if layer.window is not None else context_tokens
        per_layer = kv_bytes_per_token_per_layer(shape, layer, kv_bytes_per_value, tensor_parallel)
        by_kind[layer.kind] = by_kind.get(layer.kind, 0.0) + per_layer * kept
    per_gpu = sum(by_kind.values())
    return KVFootprint(per_gpu=per_gpu, total=per_gpu * tensor_parallel, by_kind_per_gpu=by_kind)

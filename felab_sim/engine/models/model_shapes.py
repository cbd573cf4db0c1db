"""A model's shape, declared once: read from a Hugging Face ``config.json``, counted, and sized.

Everything a calculator needs to know about a model (layers, widths, the attention kind of each
layer, its experts) is a frozen :class:`ModelShape`. A shape comes from :func:`read_config`, which
reads the JSON text or the parsed dict of a Hugging Face ``config.json``; the presets in
``felab_sim/engine/models/model_presets.py`` are published configs passed through the same reader, so a
preset and the same config pasted by a student cannot disagree.

From a shape this module computes the parameters (total, and active for a mixture of experts),
the weights' bytes at a precision, the published file's bytes tensor by tensor where the config's
quantization_config says how it stores them, and the KV cache's bytes, per layer kind
(docs/architecture.md, "Calculators"). Standard library only: no Django, nothing else of felab_sim.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ModelConfigError(ValueError):
    """A config.json felab cannot read; the message starts with the field at fault.

    ``field`` is that field's name, so a view can answer 400 naming it.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class AttentionKind(StrEnum):
    FULL = "full"
    SLIDING = "sliding"
    MLA = "mla"


@dataclass(frozen=True)
class LayerAttention:
    """How one layer attends, which decides what it keeps per token of context."""

    kind: AttentionKind
    window: int | None = None  # tokens a sliding layer keeps; None for full and MLA layers


FULL = LayerAttention(AttentionKind.FULL)
MLA_LAYER = LayerAttention(AttentionKind.MLA)


@dataclass(frozen=True)
class LatentAttention:
    """Multi-head latent attention (DeepSeek-V2/V3): the cache holds one compressed vector per
    token and layer, ``kv_lora_rank`` values, plus the ``qk_rope_head_dim`` rotary key shared by
    all heads."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None  # None: queries are projected straight from the hidden state


@dataclass(frozen=True)
class Experts:
    """A mixture of experts: which layers route, and what each expert is."""

    routed_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    shared_experts: int  # experts every token goes through, besides the routed ones
    shared_expert_intermediate_size: int
    moe_layers: tuple[int, ...]  # indices of the layers whose MLP is the mixture; the rest are dense
    expert_bias: bool = False  # gpt-oss's experts and router carry biases


# MXFP4 (the OCP microscaling format): 4-bit values, and one 8-bit scale shared by each block of 32.
MXFP4_BYTES_PER_WEIGHT = (32 * 4 + 8) / 32 / 8
BF16_BYTES = 2.0


@dataclass(frozen=True)
class StoredPrecision:
    """How the published checkpoint stores its weights, as its config.json's quantization_config
    says: the routed experts' weight matrices at ``expert_matrix_bytes`` a weight, every other
    tensor (attention, router, embeddings, norms, the experts' biases) at ``other_bytes``."""

    name: str  # in words: "MXFP4 experts, BF16 the rest"
    expert_matrix_bytes: float
    other_bytes: float


# gpt-oss's checkpoints: transformers' MXFP4 integration converts only the experts' matrices; the
# config's modules_to_not_convert lists the rest (attention, router, embeddings, output head),
# which the checkpoint keeps in BF16.
MXFP4_EXPERTS = StoredPrecision("MXFP4 experts, BF16 the rest", MXFP4_BYTES_PER_WEIGHT, BF16_BYTES)


@dataclass(frozen=True)
class ModelShape:
    """One model's shape. Parameters are counted from it, never typed in.

    ``head_dim`` is the per-head width of keys and values (for MLA layers the latent sizes in
    ``mla`` decide the cache instead). ``intermediate_size`` is the dense MLP's width, used by
    the layers not in ``experts.moe_layers``.
    """

    family: str
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tied_embeddings: bool
    layer_attention: tuple[LayerAttention, ...]
    mla: LatentAttention | None = None
    experts: Experts | None = None
    qkv_bias: bool = False
    output_bias: bool = False
    qk_norm: bool = False  # Qwen3's per-head RMSNorm on queries and keys
    attention_sinks: bool = False  # gpt-oss's one learned logit per head
    norms_per_layer: int = 2
    stored: StoredPrecision | None = None  # None: the config does not say how its file stores weights
    # FP8 checkpoints scaled by square blocks (quantization_config's weight_block_size: DeepSeek-V3's
    # 128): the block's edge; None where the config gives none (one scale a tensor).
    weight_block: int | None = None

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    def layers_of_kind(self, kind: AttentionKind) -> int:
        return sum(1 for layer in self.layer_attention if layer.kind is kind)

    @property
    def sliding_window(self) -> int | None:
        """The window of the sliding layers (every family felab reads uses one window)."""
        windows = {layer.window for layer in self.layer_attention if layer.kind is AttentionKind.SLIDING}
        return max(windows) if windows else None

    # Parameters. Each count is the sum of the weight matrices, biases and norm scales that the
    # family's transformers implementation creates, so it lands within a few parameters in 10⁹.

    def attention_params(self) -> int:
        """One layer's attention weights (projections, their biases, per-head norms, sinks)."""
        h = self.hidden_size
        if self.mla is not None:
            m = self.mla
            qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim
            if m.q_lora_rank:
                queries = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * self.attention_heads * qk_head
            else:
                queries = h * self.attention_heads * qk_head
            latent = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
            up = m.kv_lora_rank * self.attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
            out = self.attention_heads * m.v_head_dim * h
            return queries + latent + up + out
        q_width = self.attention_heads * self.head_dim
        kv_width = self.kv_heads * self.head_dim
        params = h * (q_width + 2 * kv_width) + q_width * h
        if self.qkv_bias:
            params += q_width + 2 * kv_width
        if self.output_bias:
            params += h
        if self.qk_norm:
            params += 2 * self.head_dim
        if self.attention_sinks:
            params += self.attention_heads
        return params

    def dense_mlp_params(self) -> int:
        """A gated MLP (gate, up, down): 3 × hidden × intermediate."""
        return 3 * self.hidden_size * self.intermediate_size

    def expert_params(self) -> int:
        """One routed expert: 3 × hidden × expert width, plus biases where the family has them."""
        assert self.experts is not None
        e = self.experts
        params = 3 * self.hidden_size * e.expert_intermediate_size
        if e.expert_bias:
            params += 2 * e.expert_intermediate_size + self.hidden_size
        return params

    def expert_matrix_params(self) -> int:
        """One routed expert's weight matrices, biases left out: 3 × hidden × expert width."""
        assert self.experts is not None
        return 3 * self.hidden_size * self.experts.expert_intermediate_size

    def _router_params(self) -> int:
        assert self.experts is not None
        e = self.experts
        return self.hidden_size * e.routed_experts + (e.routed_experts if e.expert_bias else 0)

    def _shared_expert_params(self) -> int:
        assert self.experts is not None
        e = self.experts
        return e.shared_experts * 3 * self.hidden_size * e.shared_expert_intermediate_size

    def embedding_params(self) -> int:
        """The token embedding, and the output head when it is a separate matrix."""
        table = self.vocab_size * self.hidden_size
        return table if self.tied_embeddings else 2 * table

    def _common_params(self) -> int:
        """What every token uses whatever the routing: attention, norms, embeddings."""
        norms = self.layers * self.norms_per_layer * self.hidden_size + self.hidden_size
        return self.layers * self.attention_params() + norms + self.embedding_params()

    def _dense_layers(self) -> int:
        return self.layers - (len(self.experts.moe_layers) if self.experts else 0)

    @property
    def total_params(self) -> int:
        """Every parameter: attention + norms + embeddings + dense MLPs + every expert."""
        params = self._common_params() + self._dense_layers() * self.dense_mlp_params()
        if self.experts is not None:
            per_moe_layer = (
                self.experts.routed_experts * self.expert_params()
                + self._shared_expert_params()
                + self._router_params()
            )
            params += len(self.experts.moe_layers) * per_moe_layer
        return params

    @property
    def active_params(self) -> int:
        """The parameters one token goes through: total less the routed experts it skips
        (experts_per_token of routed_experts are used per MoE layer). Embeddings count whole,
        as Mistral and Qwen count their active parameters. Dense models: equal to the total."""
        if self.experts is None:
            return self.total_params
        skipped = self.experts.routed_experts - self.experts.experts_per_token
        return self.total_params - len(self.experts.moe_layers) * skipped * self.expert_params()

    @property
    def active_params_without_embedding(self) -> int:
        """Active parameters less the input embedding table when it is separate from the output
        head: a token reads one row of it, not the table. This is what a decode step multiplies
        by (OpenAI and DeepSeek count their active parameters this way)."""
        untied_input = 0 if self.tied_embeddings else self.vocab_size * self.hidden_size
        return self.active_params - untied_input


# ---------------------------------------------------------------------------------------------
# Weights and KV cache in bytes
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Reading config.json
# ---------------------------------------------------------------------------------------------

Config = Mapping[str, Any]


def _get(config: Config, name: str) -> Any:
    if name not in config or config[name] is None:
        raise ModelConfigError(name, "missing")
    return config[name]


def _int(config: Config, name: str, default: int | None = None, minimum: int = 1) -> int:
    if default is not None and config.get(name) is None:
        return default
    value = _get(config, name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelConfigError(name, f"expected a whole number, got {value!r}")
    if value < minimum:
        raise ModelConfigError(name, f"must be at least {minimum}, got {value}")
    return value


def _optional_int(config: Config, name: str, minimum: int = 1) -> int | None:
    if config.get(name) is None:
        return None
    return _int(config, name, minimum=minimum)


def _bool(config: Config, name: str, default: bool) -> bool:
    value = config.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ModelConfigError(name, f"expected true or false, got {value!r}")
    return value


def _int_list(config: Config, name: str) -> tuple[int, ...]:
    value = config.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise ModelConfigError(name, f"expected a list of layer numbers, got {value!r}")
    return tuple(value)


LAYER_TYPES = {"full_attention": AttentionKind.FULL, "sliding_attention": AttentionKind.SLIDING}


def _from_layer_types(config: Config, layers: int) -> tuple[LayerAttention, ...] | None:
    """The per-layer list newer configs carry (gpt-oss, Gemma, Qwen), or None when absent."""
    value = config.get("layer_types")
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != layers:
        raise ModelConfigError("layer_types", f"expected a list of {layers} entries, one per layer")
    known = ", ".join(LAYER_TYPES)
    if not all(isinstance(kind, str) for kind in value):  # a list or object is no kind (and unhashable)
        raise ModelConfigError("layer_types", f"expected names of kinds ({known}), one per layer")
    unknown = sorted({kind[:40] for kind in value if kind not in LAYER_TYPES})
    if unknown:
        raise ModelConfigError("layer_types", f"unknown kind {', '.join(unknown[:5])} (felab reads {known})")
    window = _int(config, "sliding_window") if "sliding_attention" in value else None
    return tuple(
        LayerAttention(AttentionKind.SLIDING, window) if kind == "sliding_attention" else FULL
        for kind in value
    )


def _sliding_where(
    config: Config, layers: int, is_sliding: Callable[[int], bool]
) -> tuple[LayerAttention, ...]:
    window = _int(config, "sliding_window")
    return tuple(
        LayerAttention(AttentionKind.SLIDING, window) if is_sliding(i) else FULL for i in range(layers)
    )


def _attention_all_full(config: Config, layers: int) -> tuple[LayerAttention, ...]:
    return _from_layer_types(config, layers) or (FULL,) * layers


def _attention_mistral(config: Config, layers: int) -> tuple[LayerAttention, ...]:
    """Mistral and Mixtral: one sliding window on every layer when ``sliding_window`` is set
    (Mistral-7B-v0.1: 4096); null means full attention (v0.3, Mixtral). A config without the
    key is read as full attention: the configs Mistral publishes always state it."""
    found = _from_layer_types(config, layers)
    if found:
        return found
    if config.get("sliding_window") is None:
        return (FULL,) * layers
    return _sliding_where(config, layers, lambda i: True)


def _attention_qwen(config: Config, layers: int) -> tuple[LayerAttention, ...]:
    """Qwen2/2.5/3: ``sliding_window`` is only used when ``use_sliding_window`` is true, and then
    for the layers from ``max_window_layers`` on (transformers' Qwen2Config.layer_types)."""
    found = _from_layer_types(config, layers)
    if found:
        return found
    if not _bool(config, "use_sliding_window", False) or config.get("sliding_window") is None:
        return (FULL,) * layers
    first = _int(config, "max_window_layers", default=layers, minimum=0)
    return _sliding_where(config, layers, lambda i: i >= first)


def _attention_alternating(config: Config, layers: int) -> tuple[LayerAttention, ...]:
    """Gemma 2 and gpt-oss: even layers slide, odd layers attend fully (Gemma2's
    ``is_sliding = not bool(layer_idx % 2)``; openai/gpt-oss, gpt_oss/torch/model.py,
    ``sliding_window if layer_idx % 2 == 0``) unless the config lists ``layer_types``."""
    return _from_layer_types(config, layers) or _sliding_where(config, layers, lambda i: i % 2 == 0)


def _attention_gemma3(config: Config, layers: int) -> tuple[LayerAttention, ...]:
    """Gemma 3: five sliding layers then one full, i.e. layer i is full when
    (i + 1) % sliding_window_pattern == 0 (pattern 6), unless ``layer_types`` is given."""
    found = _from_layer_types(config, layers)
    if found:
        return found
    pattern = _int(config, "sliding_window_pattern", default=6)
    return _sliding_where(config, layers, lambda i: (i + 1) % pattern != 0)


def _experts_mixtral(config: Config, layers: int) -> Experts:
    return Experts(
        routed_experts=_int(config, "num_local_experts"),
        experts_per_token=_int(config, "num_experts_per_tok"),
        expert_intermediate_size=_int(config, "intermediate_size"),
        shared_experts=0,
        shared_expert_intermediate_size=0,
        moe_layers=tuple(range(layers)),
    )


def _experts_gpt_oss(config: Config, layers: int) -> Experts:
    per_token = (
        "num_experts_per_tok" if config.get("num_experts_per_tok") is not None else "experts_per_token"
    )
    return Experts(
        routed_experts=_int(config, "num_local_experts"),
        experts_per_token=_int(config, per_token),
        expert_intermediate_size=_int(config, "intermediate_size"),
        shared_experts=0,
        shared_expert_intermediate_size=0,
        moe_layers=tuple(range(layers)),
        expert_bias=True,
    )


def _experts_qwen_moe(config: Config, layers: int) -> Experts:
    """Qwen2-MoE and Qwen3-MoE: layer i routes unless listed in ``mlp_only_layers``, every
    ``decoder_sparse_step``-th layer ((i + 1) % step == 0). Qwen2-MoE adds one shared expert of
    ``shared_expert_intermediate_size`` (its one-number gate is left out of the count)."""
    only_dense = set(_int_list(config, "mlp_only_layers"))
    step = _int(config, "decoder_sparse_step", default=1)
    shared_size = _optional_int(config, "shared_expert_intermediate_size") or 0
    return Experts(
        routed_experts=_int(config, "num_experts"),
        experts_per_token=_int(config, "num_experts_per_tok"),
        expert_intermediate_size=_int(config, "moe_intermediate_size"),
        shared_experts=1 if shared_size else 0,
        shared_expert_intermediate_size=shared_size,
        moe_layers=tuple(i for i in range(layers) if i not in only_dense and (i + 1) % step == 0),
    )


def _experts_deepseek(config: Config, layers: int) -> Experts:
    """DeepSeek-V2/V3: dense MLPs in the first ``first_k_dense_replace`` layers, then a mixture
    on every ``moe_layer_freq``-th layer, each with ``n_shared_experts`` always-on experts."""
    first_dense = _int(config, "first_k_dense_replace", default=0, minimum=0)
    frequency = _int(config, "moe_layer_freq", default=1)
    return Experts(
        routed_experts=_int(config, "n_routed_experts"),
        experts_per_token=_int(config, "num_experts_per_tok"),
        expert_intermediate_size=_int(config, "moe_intermediate_size"),
        shared_experts=_int(config, "n_shared_experts", default=0, minimum=0),
        shared_expert_intermediate_size=_int(config, "moe_intermediate_size"),
        moe_layers=tuple(i for i in range(layers) if i >= first_dense and i % frequency == 0),
    )


def _latent_attention(config: Config) -> LatentAttention:
    return LatentAttention(
        kv_lora_rank=_int(config, "kv_lora_rank"),
        qk_rope_head_dim=_int(config, "qk_rope_head_dim"),
        qk_nope_head_dim=_int(config, "qk_nope_head_dim"),
        v_head_dim=_int(config, "v_head_dim"),
        q_lora_rank=_optional_int(config, "q_lora_rank"),
    )


@dataclass(frozen=True)
class Family:
    """How one model family's config.json is read. Defaults are transformers' for that family."""

    name: str
    attention: Callable[[Config, int], tuple[LayerAttention, ...]]
    experts: Callable[[Config, int], Experts] | None = None
    latent: bool = False
    tied_default: bool = False
    qkv_bias: bool | None = None  # None: the config's attention_bias decides (q, k, v and output)
    qk_norm: bool = False
    attention_sinks: bool = False
    norms_per_layer: int = 2
    default_vocab_size: int | None = None


FAMILIES: dict[str, Family] = {
    "llama": Family("Llama", _attention_all_full),
    "mistral": Family("Mistral", _attention_mistral),
    "mixtral": Family("Mixtral", _attention_mistral, _experts_mixtral),
    "qwen2": Family("Qwen2", _attention_qwen, qkv_bias=True),
    "qwen3": Family("Qwen3", _attention_qwen, qk_norm=True),
    "qwen2_moe": Family("Qwen2-MoE", _attention_qwen, _experts_qwen_moe, qkv_bias=True),
    "qwen3_moe": Family("Qwen3-MoE", _attention_qwen, _experts_qwen_moe, qk_norm=True),
    "gemma2": Family("Gemma 2", _attention_alternating, tied_default=True, norms_per_layer=4),
    "gemma3_text": Family(
        "Gemma 3",
        _attention_gemma3,
        tied_default=True,
        qk_norm=True,
        norms_per_layer=4,
        default_vocab_size=262_208,
    ),
    "gpt_oss": Family("gpt-oss", _attention_alternating, _experts_gpt_oss, attention_sinks=True),
    "deepseek_v2": Family(
        "DeepSeek-V2", lambda config, layers: (MLA_LAYER,) * layers, _experts_deepseek, True
    ),
    "deepseek_v3": Family(
        "DeepSeek-V3", lambda config, layers: (MLA_LAYER,) * layers, _experts_deepseek, True
    ),
}
# A config whose model_type is missing is identified by its first architecture.
ARCHITECTURES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3_text",
    "GptOssForCausalLM": "gpt_oss",
    "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3",
}
# Multimodal wrappers name the wrapper at the top and the language model in text_config.
MODEL_TYPE_ALIASES = {"gemma3": "gemma3_text"}


def _parse(config_json: str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(config_json, str):
        try:
            config_json = json.loads(config_json)
        except json.JSONDecodeError as error:
            raise ModelConfigError("config", f"not JSON ({error.msg} at line {error.lineno})") from None
        except ValueError:  # a number past Python's 4,300 digits
            raise ModelConfigError("config", "holds a number too long to read") from None
        except RecursionError:
            raise ModelConfigError("config", "nested too deeply to read") from None
    if not isinstance(config_json, Mapping):
        raise ModelConfigError("config", "expected a JSON object")
    return config_json


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's fields: a nested ``text_config`` (Gemma 3 and other multimodal
    wrappers) over the top level, so a field stated only at the top still counts."""
    nested = config.get("text_config")
    if nested is None:
        return config
    if not isinstance(nested, Mapping):
        raise ModelConfigError("text_config", "expected a JSON object")
    return {**config, **nested}


def _family(config: Config, top: Config) -> tuple[str, Family]:
    for model_type in (config.get("model_type"), top.get("model_type")):
        if isinstance(model_type, str):
            model_type = MODEL_TYPE_ALIASES.get(model_type, model_type)
            if model_type in FAMILIES:
                return model_type, FAMILIES[model_type]
    architectures = config.get("architectures") or top.get("architectures") or []
    if isinstance(architectures, list):
        for architecture in architectures:
            if architecture in ARCHITECTURES:
                name = ARCHITECTURES[architecture]
                return name, FAMILIES[name]
    model_type = config.get("model_type") or top.get("model_type")
    if model_type is None and not architectures:
        raise ModelConfigError("model_type", "missing")
    known = ", ".join(sorted(FAMILIES))
    raise ModelConfigError("model_type", f"{model_type!r} is not a family felab reads ({known})")


# Most a field of a pasted config may hold, by field name: (most, what that bound is), e.g.
# (1000, "the kv-cache calculator's layers"). The caller passes them in (model_params.py takes
# them from the typed fields' declarations), so a pasted number is held to the typed one's range.
Bounds = Mapping[str, tuple[float, str]]


def _digits(value: int) -> str:
    """A number as a message shows it: 10,000,000, or "a 1,300-digit number"."""
    if value < 10**40:
        return f"{value:,}"
    return f"a {len(str(value)):,}-digit number"  # JSON's reader refuses more than 4,300 digits


def _check_bounds(config: Config, bounds: Bounds) -> None:
    """Every whole number a bound names within it (a list's every entry), before anything is
    sized: 10¹² layers would be a tuple of 10¹² entries."""
    for name, (most, what) in bounds.items():
        value = config.get(name)
        values = value if isinstance(value, list) else [value]
        for entry in values:
            if isinstance(entry, int) and not isinstance(entry, bool) and entry > most:
                raise ModelConfigError(name, f"must be at most {most:,.0f} ({what}), got {_digits(entry)}")


def _stored_precision(config: Config, experts: Experts | None) -> StoredPrecision | None:
    """What the config's quantization_config says of the file; None for a method felab does not
    model (or none: the config alone does not say what precision the file's tensors are in)."""
    quantization = config.get("quantization_config")
    if not isinstance(quantization, Mapping) or experts is None:
        return None
    return MXFP4_EXPERTS if quantization.get("quant_method") == "mxfp4" else None


def _weight_block(config: Config) -> int | None:
    """quantization_config's weight_block_size edge for an FP8 checkpoint of square blocks."""
    quantization = config.get("quantization_config")
    if not isinstance(quantization, Mapping) or quantization.get("quant_method") != "fp8":
        return None
    block = quantization.get("weight_block_size")
    if (
        isinstance(block, list)
        and len(block) == 2
        and all(
            isinstance(edge, int) and not isinstance(edge, bool) and 1 <= edge <= 1_000_000 for edge in block
        )
        and block[0] == block[1]
    ):
        return int(block[0])
    return None


def read_config(config_json: str | Mapping[str, Any], bounds: Bounds | None = None) -> ModelShape:
    """A :class:`ModelShape` from a Hugging Face config.json, as JSON text or a parsed dict.

    The family comes from ``model_type`` (else ``architectures``); unknown fields are ignored.
    A config that cannot be read raises :class:`ModelConfigError` naming the field, e.g.
    ``num_key_value_heads: missing``, as does a number over its ``bounds``.
    """
    top = _parse(config_json)
    config = _text_config(top)
    if bounds:
        _check_bounds(config, bounds)
    model_type, family = _family(config, top)
    layers = _int(config, "num_hidden_layers")
    hidden = _int(config, "hidden_size")
    heads = _int(config, "num_attention_heads")
    vocab = _int(config, "vocab_size", default=family.default_vocab_size)
    experts = family.experts(config, layers) if family.experts else None
    if experts is not None and experts.experts_per_token > experts.routed_experts:
        # A token routed to more experts than the layer has: no such model, and the chance that
        # an expert goes unused, (1 - k/E)ⁿ, would be a negative base.
        field = next(
            name for name in ("num_experts_per_tok", "experts_per_token") if config.get(name) is not None
        )
        raise ModelConfigError(
            field,
            f"{experts.experts_per_token:,} experts a token is more than the "
            f"{experts.routed_experts:,} routed experts a layer has",
        )
    has_dense_layers = experts is None or len(experts.moe_layers) < layers
    if family.latent:
        mla = _latent_attention(config)
        kv_heads = _int(config, "num_key_value_heads", default=heads)  # not what MLA caches
        head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    else:
        mla = None
        kv_heads = _int(config, "num_key_value_heads")
        if heads % kv_heads:
            raise ModelConfigError(
                "num_key_value_heads", f"{kv_heads} does not divide num_attention_heads {heads}"
            )
        # Configs without head_dim use hidden_size ÷ heads, as transformers does.
        head_dim = _optional_int(config, "head_dim") or hidden // heads
        if head_dim < 1:
            raise ModelConfigError("head_dim", f"missing, and hidden_size {hidden} ÷ {heads} heads is 0")
    attention_bias = _bool(config, "attention_bias", False)
    layer_attention = family.attention(config, layers)
    return ModelShape(
        family=model_type,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=_int(config, "intermediate_size") if has_dense_layers else 0,
        vocab_size=vocab,
        tied_embeddings=_bool(config, "tie_word_embeddings", family.tied_default),
        layer_attention=layer_attention,
        mla=mla,
        experts=experts,
        qkv_bias=attention_bias if family.qkv_bias is None else family.qkv_bias,
        output_bias=attention_bias if family.qkv_bias is None else False,
        qk_norm=family.qk_norm,
        attention_sinks=family.attention_sinks,
        norms_per_layer=family.norms_per_layer,
        stored=_stored_precision(top if "quantization_config" in top else config, experts),
        weight_block=_weight_block(top if "quantization_config" in top else config),
    )


def billions(params: int) -> float:
    """A parameter count in billions, for comparing with a publisher's number."""
    return params / 1e9

"""A model's shape, declared once: what a calculator knows of a model, and its parameters counted.

Everything a calculator needs to know about a model (layers, widths, the attention kind of each
layer, its experts) is a frozen :class:`ModelShape`. A shape comes from ``model_config.py``'s
:func:`read_config`, which reads the JSON text or the parsed dict of a Hugging Face
``config.json``; the presets in ``felab_sim/engine/models/model_presets.py`` are published configs
passed through the same reader, so a preset and the same config pasted by a student cannot disagree.

From a shape this module counts the parameters (total, and active for a mixture of experts). Its
bytes are sized beside it: the weights' at a precision and the published file's tensor by tensor
in ``model_weights.py``, the KV cache's per layer kind in ``model_kv_cache.py`` (docs/architecture.md,
"Calculators"). Standard library only: no Django, nothing else of felab_sim.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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


def billions(params: int) -> float:
    """A parameter count in billions, for comparing with a publisher's number."""
    return params / 1e9

"""A model's shape as calculator parameters: a preset, a pasted config.json, or typed-in sizes.

The calculators that size a KV cache declare these parameters and read the shape through
:func:`shape_of`, so a preset, the same config pasted by a student and the sizes typed in go
through one code path (felab_sim/engine/models/model_config.py). Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..core.calculator import typed
from ..core.params import Param, ParamError, ParamValue
from .model_config import ModelConfigError, read_config
from .model_kv_cache import kv_bytes_for_sequence, kv_bytes_per_token, kv_heads_per_gpu
from .model_presets import BY_NAME
from .model_shapes import FULL, AttentionKind, ModelShape
from .model_weights import stored_bytes

# Bytes per stored KV value; llama.cpp's block formats carry a small scale overhead.
KV_DTYPE_BYTES = {"f16": 2.0, "q8_0": 1.0625, "q4_0": 0.5625, "fp8": 1.0}
KV_DTYPE_LABELS = {
    "f16": "f16 (2 bytes)",
    "q8_0": "q8_0 (1.0625 bytes)",
    "q4_0": "q4_0 (0.5625 bytes)",
    "fp8": "fp8 (1 byte)",
}

TYPED = "typed"
MODEL = Param(
    "model",
    "choice",
    TYPED,
    "A published model's shape (its config.json); a pasted config below wins over it.",
    choices={TYPED: "the sizes typed in below", **{name: name for name in BY_NAME}},
)
# Long enough for any published config.json felab reads (DeepSeek-V3's is about 1,700 characters
# pretty-printed), short enough that a page's address holding it stays within what servers take.
CONFIG_CHARS = 12_000
MODEL_CONFIG = Param(
    "model_config",
    "text",
    None,
    "A Hugging Face config.json pasted whole; it sets the layers, heads and attention kinds.",
    label="config.json",
    optional=True,
    max_chars=CONFIG_CHARS,
)
TENSOR_PARALLEL = Param(
    "tensor_parallel",
    "int",
    1,
    "GPUs one copy of the model is split across; each keeps KV heads ÷ GPUs (at least one).",
    "GPUs",
    label="tensor parallel",
    low=1,
    high=1024,
)


# The most a typed-in size may be: the calculators that type a shape in declare their fields with
# these, and a pasted config.json's whole numbers are held to the same.
MOST_LAYERS = 1000
MOST_KV_HEADS = 1000
MOST_HEAD_DIM = 100_000
MOST_CONTEXT_TOKENS = 100_000_000
MOST_SIZE = 1_000_000  # finetune-memory's sizes: hidden, heads, MLP, LoRA rank
MOST_VOCAB = 10_000_000

# The typed field whose range holds each whole number of a pasted config.json, as (calculator,
# parameter, its most): a pasted config obeys the bounds a typed-in shape does. Fields no calculator
# types in take the range of the nearest typed one (an expert count a head count's, a latent rank a
# LoRA rank's, a window the context's, a layer index or step the layers').
CONFIG_FIELDS = {
    "num_hidden_layers": ("kv-cache", "layers", MOST_LAYERS),
    "num_key_value_heads": ("kv-cache", "kv_heads", MOST_KV_HEADS),
    "head_dim": ("kv-cache", "head_dim", MOST_HEAD_DIM),
    "qk_rope_head_dim": ("kv-cache", "head_dim", MOST_HEAD_DIM),
    "qk_nope_head_dim": ("kv-cache", "head_dim", MOST_HEAD_DIM),
    "v_head_dim": ("kv-cache", "head_dim", MOST_HEAD_DIM),
    "sliding_window": ("kv-cache", "context_tokens", MOST_CONTEXT_TOKENS),
    "sliding_window_pattern": ("kv-cache", "layers", MOST_LAYERS),
    "max_window_layers": ("kv-cache", "layers", MOST_LAYERS),
    "first_k_dense_replace": ("kv-cache", "layers", MOST_LAYERS),
    "decoder_sparse_step": ("kv-cache", "layers", MOST_LAYERS),
    "moe_layer_freq": ("kv-cache", "layers", MOST_LAYERS),
    "mlp_only_layers": ("kv-cache", "layers", MOST_LAYERS),
    "hidden_size": ("finetune-memory", "hidden", MOST_SIZE),
    "num_attention_heads": ("finetune-memory", "heads", MOST_SIZE),
    "intermediate_size": ("finetune-memory", "mlp_hidden", MOST_SIZE),
    "moe_intermediate_size": ("finetune-memory", "mlp_hidden", MOST_SIZE),
    "shared_expert_intermediate_size": ("finetune-memory", "mlp_hidden", MOST_SIZE),
    "vocab_size": ("finetune-memory", "vocab", MOST_VOCAB),
    "kv_lora_rank": ("finetune-memory", "rank", MOST_SIZE),
    "q_lora_rank": ("finetune-memory", "rank", MOST_SIZE),
    "num_local_experts": ("finetune-memory", "heads", MOST_SIZE),
    "num_experts": ("finetune-memory", "heads", MOST_SIZE),
    "n_routed_experts": ("finetune-memory", "heads", MOST_SIZE),
    "n_shared_experts": ("finetune-memory", "heads", MOST_SIZE),
    "num_experts_per_tok": ("finetune-memory", "heads", MOST_SIZE),
    "experts_per_token": ("finetune-memory", "heads", MOST_SIZE),
}


@lru_cache(maxsize=1)
def config_bounds() -> dict[str, tuple[float, str]]:
    """Each config field's most, with the typed field it is held to (CONFIG_FIELDS)."""
    return {
        field_name: (most, f"as the {calculator} calculator's {name}")
        for field_name, (calculator, name, most) in CONFIG_FIELDS.items()
    }


def read_pasted_config(config_text: str) -> ModelShape:
    """A pasted config.json's shape, each number held to its typed field's range (config_bounds);
    ModelConfigError naming the field otherwise."""
    return read_config(config_text, config_bounds())


@lru_cache(maxsize=64)
def _read(config_text: str) -> ModelShape:
    # A chart computes one page's settings dozens of times: the config is read once.
    return read_pasted_config(config_text)


def typed_shape(layers: int, kv_heads: int, head_dim: int) -> ModelShape:
    """A model that attends fully on every layer, sized by hand (only its KV fields are real)."""
    return ModelShape(
        family="typed in",
        layers=layers,
        hidden_size=kv_heads * head_dim,
        attention_heads=kv_heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=0,
        vocab_size=0,
        tied_embeddings=True,
        layer_attention=(FULL,) * layers,
    )


def shape_of(p: Mapping[str, ParamValue]) -> ModelShape:
    """The shape the settings name: a pasted config, else a preset, else the typed-in sizes.

    ``ParamError`` naming ``model_config`` when the config cannot be read, with the field at
    fault first in the message ("num_key_value_heads: missing").
    """
    config = p["model_config"]
    if config:
        try:
            return _read(str(config))
        except ModelConfigError as error:
            raise ParamError(MODEL_CONFIG.name, f"model_config cannot be read: {error}") from None
    if p["model"] != TYPED:
        return BY_NAME[str(p["model"])].shape
    return typed_shape(int(p["layers"]), int(p["kv_heads"]), int(p["head_dim"]))


def check_tensor_parallel(shape: ModelShape, tensor_parallel: int) -> None:
    """Refuses a split vLLM refuses: KV heads that do not divide evenly across the GPUs."""
    if shape.mla is not None:
        return  # every GPU keeps the whole latent; any split is fine
    try:
        kv_heads_per_gpu(shape, tensor_parallel)
    except ValueError as error:
        raise ParamError(TENSOR_PARALLEL.name, f"tensor_parallel: {error}") from None


def model_name(p: Mapping[str, ParamValue]) -> str:
    """What the settings' shape is, in words: the config's family, the preset, or "typed in"."""
    if p["model_config"]:
        return f"pasted config.json ({shape_of(p).family})"
    return "typed-in sizes" if p["model"] == TYPED else str(p["model"])


def kv_terms(
    shape: ModelShape, kv_bytes_per_value: float, tensor_parallel: int = 1
) -> dict[AttentionKind, str]:
    """Each layer kind's KV bytes per token, written out with the shape's numbers:
    "2 × 80 layers × 8 KV heads × 128 × 2 B", "61 MLA layers × (512 + 64) × 2 B"."""
    per_value = typed(kv_bytes_per_value, "B")
    terms = {}
    for kind in AttentionKind:
        layers = shape.layers_of_kind(kind)
        if not layers:
            continue
        if kind is AttentionKind.MLA:
            assert shape.mla is not None
            latent = f"({shape.mla.kv_lora_rank} + {shape.mla.qk_rope_head_dim})"
            terms[kind] = f"{layers} MLA layers × {latent} × {per_value}"
            continue
        heads = f"{kv_heads_per_gpu(shape, tensor_parallel)} KV heads"
        if tensor_parallel > 1:
            heads += f" ({shape.kv_heads} ÷ {tensor_parallel} GPUs, at least 1)"
        named = "layers" if kind is AttentionKind.FULL else "sliding layers"
        terms[kind] = f"2 × {layers} {named} × {heads} × {shape.head_dim} × {per_value}"
    return terms


def model_chosen(p: Mapping[str, ParamValue]) -> bool:
    """Whether the settings name a model (a pasted config or a preset) rather than typed sizes.
    Settings without the two (a caller's own, through ``compute_with``) are typed sizes."""
    return bool(p.get("model_config")) or p.get("model", TYPED) != TYPED


KV_DTYPE = Param(
    "kv_dtype",
    "choice",
    "f16",
    "How the KV cache stores each value, for a model chosen or pasted (a typed-in KV bytes per "
    "token is used as typed).",
    label="cache type",
    choices=KV_DTYPE_LABELS,
)


@dataclass(frozen=True)
class DecodeSizes:
    """What a decode step needs of a model: parameters held, parameters read per token, and the
    KV bytes one token of this context costs on average (sliding layers keep at most their
    window, so at a long context a token costs less than its first)."""

    params_b: float
    active_params_b: float
    kv_bytes_per_token: float


def decode_sizes(p: Mapping[str, ParamValue]) -> DecodeSizes:
    """The chosen model's sizes for a decode step at ``context_tokens`` and ``kv_dtype``.

    Active parameters leave out the input embedding table when it is separate from the output
    head: a token reads one row of it (ModelShape.active_params_without_embedding). KV per token
    is one sequence's KV at this context ÷ the context (at context 0, what the first token adds).
    """
    shape = shape_of(p)
    per_value = KV_DTYPE_BYTES[str(p["kv_dtype"])]
    context = int(p["context_tokens"])
    if context > 0:
        per_token = kv_bytes_for_sequence(shape, context, per_value).per_gpu / context
    else:
        per_token = sum(kv_bytes_per_token(shape, per_value).values())
    return DecodeSizes(
        params_b=shape.total_params / 1e9,
        active_params_b=shape.active_params_without_embedding / 1e9,
        kv_bytes_per_token=per_token,
    )


def kv_per_token_formula(p: Mapping[str, ParamValue], shown: str) -> str:
    """The KV bytes per token a decode calculator used, with the shape's numbers; ``shown`` is the
    output as printed."""
    if not model_chosen(p):
        return f"{shown}: as typed"
    shape = shape_of(p)
    terms = " + ".join(kv_terms(shape, KV_DTYPE_BYTES[str(p["kv_dtype"])]).values())
    window = shape.sliding_window
    context = int(p["context_tokens"])
    if window is None or context <= window:
        return f"{shown} = {terms} ({model_name(p)})"
    return (
        f"{shown} = the KV of one {typed(context)}-token sequence ÷ {typed(context)} tokens, "
        f"sliding layers keeping {typed(window)} ({terms} per token until the window fills; {model_name(p)})"
    )


def stored_weights_gb(p: Mapping[str, ParamValue], params_read_b: float) -> tuple[float, float] | None:
    """The chosen model's file as published, each tensor at its stored precision: (GB held, GB a
    step reads when it reads ``params_read_b`` billion parameters: the shared ones and whole
    routed experts, as weights_read_b counts them). None when no model is chosen or its config
    does not say how the file stores its weights (model_weights.stored_bytes)."""
    if not model_chosen(p):
        return None
    shape = shape_of(p)
    stored = stored_bytes(shape)
    if stored is None:
        return None
    experts_read = 0.0
    if shape.experts is not None:
        used = shape.experts.experts_per_token * len(shape.experts.moe_layers)
        shared_params = shape.active_params_without_embedding - used * shape.expert_params()
        experts_read = (params_read_b * 1e9 - shared_params) / shape.expert_params()
    return stored.total / 1e9, stored.read_per_token(experts_read) / 1e9

"""Reading a Hugging Face ``config.json`` into a :class:`ModelShape`: :func:`read_config`, each
family's way of stating its layers, attention and experts (:data:`FAMILIES`), the bounds a pasted
config is held to, and :class:`ModelConfigError`, which names the field a config gets wrong.
Standard library only: no Django, nothing else of felab_sim.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .model_shapes import (
    FULL,
    MLA_LAYER,
    MXFP4_EXPERTS,
    AttentionKind,
    Experts,
    LatentAttention,
    LayerAttention,
    ModelShape,
    StoredPrecision,
)


class ModelConfigError(ValueError):
    """A config.json felab cannot read; the message starts with the field at fault.

    ``field`` is that field's name, so a view can answer 400 naming it.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


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

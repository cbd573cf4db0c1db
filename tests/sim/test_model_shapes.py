"""Model shapes: config.json read per family, parameters counted, KV cache sized per layer kind.

Pure: no database. The KV numbers are checked to the byte against each architecture's own
formula written out here from the config's numbers, not against the module's arithmetic.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from felab_sim.engine.models import model_shapes
from felab_sim.engine.models.model_config import ModelConfigError, read_config
from felab_sim.engine.models.model_kv_cache import kv_bytes_for_sequence, kv_bytes_per_token, kv_heads_per_gpu
from felab_sim.engine.models.model_presets import PRESETS, preset
from felab_sim.engine.models.model_shapes import AttentionKind
from felab_sim.engine.models.model_weights import weight_bytes

BF16 = 2
CONTEXT_32K = 32_768


def config_of(name: str) -> dict:
    return copy.deepcopy(dict(preset(name).config))


# KV cache, to the byte, at BF16 and 32k tokens of context -------------------------------------


def test_deepseek_v3_caches_one_latent_per_layer_with_no_factor_two_and_no_heads():
    # MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 bytes × 61 layers; 128 heads play no part.
    per_token = (512 + 64) * BF16 * 61
    assert per_token == 70_272
    shape = preset("DeepSeek-V3").shape
    assert kv_bytes_per_token(shape, BF16) == {AttentionKind.MLA: per_token}
    assert kv_bytes_for_sequence(shape, CONTEXT_32K, BF16).per_gpu == per_token * CONTEXT_32K == 2_302_672_896


def test_gpt_oss_20b_caps_its_twelve_sliding_layers_at_128_tokens():
    # 24 layers alternate sliding (window 128) and full; each: 2 × 8 KV heads × 64 × 2 bytes.
    per_layer = 2 * 8 * 64 * BF16
    assert per_layer == 2_048
    shape = preset("gpt-oss-20b").shape
    assert kv_bytes_per_token(shape, BF16) == {
        AttentionKind.SLIDING: 12 * per_layer,
        AttentionKind.FULL: 12 * per_layer,
    }
    sequence = kv_bytes_for_sequence(shape, CONTEXT_32K, BF16)
    assert sequence.by_kind_per_gpu[AttentionKind.FULL] == 12 * per_layer * CONTEXT_32K
    assert sequence.by_kind_per_gpu[AttentionKind.SLIDING] == 12 * per_layer * 128
    assert sequence.per_gpu == 808_452_096


def test_llama_3_1_70b_caches_every_token_in_all_80_layers():
    per_token = 2 * 80 * 8 * 128 * BF16  # 2 (K, V) × layers × KV heads × head size × bytes
    assert per_token == 327_680  # lesson 05's 320 KiB
    shape = preset("Llama-3.1-70B").shape
    assert kv_bytes_per_token(shape, BF16) == {AttentionKind.FULL: per_token}
    assert kv_bytes_for_sequence(shape, CONTEXT_32K, BF16).per_gpu == 10_737_418_240


def test_qwen2_5_7b_does_not_slide_though_its_config_states_a_window():
    # sliding_window 131072 with use_sliding_window false: all 28 layers full.
    per_token = 2 * 28 * 4 * 128 * BF16
    assert per_token == 57_344  # lesson 05's 56 KiB
    shape = preset("Qwen2.5-7B").shape
    assert kv_bytes_per_token(shape, BF16) == {AttentionKind.FULL: per_token}
    assert kv_bytes_for_sequence(shape, CONTEXT_32K, BF16).per_gpu == 1_879_048_192


# Parameters against the publishers' numbers ---------------------------------------------------


def matches_published(computed_b: float, printed: str) -> bool:
    """Within 1% of the number as printed, or the number is the computed count rounded or cut to
    the digits it prints (Qwen prints 3.35B active as 3.3B; DeepSeek rounds 36.6B to 37B)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    published = float(printed)
    scale = 10**decimals
    cut = math.floor(computed_b * scale) / scale
    return (
        math.isclose(computed_b, published, rel_tol=0.01)
        or math.isclose(round(computed_b, decimals), published)
        or math.isclose(cut, published)
    )


@pytest.mark.parametrize("model", [p for p in PRESETS if p.published], ids=lambda p: p.name)
def test_parameter_counts_match_what_the_publisher_states(model):
    shape, published = model.shape, model.published
    assert math.isclose(shape.total_params / 1e9, published.total_b, rel_tol=0.01)
    if published.active_b is not None:
        active = (
            shape.active_params_without_embedding
            if published.active_excludes_input_embedding
            else shape.active_params
        )
        assert matches_published(active / 1e9, repr(published.active_b))
    else:
        assert shape.active_params == shape.total_params


@pytest.mark.parametrize(
    ("name", "total_b", "active_b"),
    [
        ("Llama-3.1-8B", "8.03", None),
        ("Llama-3.1-70B", "70.6", None),
        ("Llama-3.2-1B", "1.24", None),
        ("Qwen2.5-7B", "7.62", None),
        ("gpt-oss-20b", "20.9", "3.6"),
        ("gpt-oss-120b", "117", "5.1"),
        ("Qwen3-30B-A3B", "30.5", "3.3"),
        ("DeepSeek-V3", "671", "37"),
        ("Mixtral-8x7B", "46.7", "12.9"),
    ],
)
def test_the_numbers_the_course_quotes_hold(name, total_b, active_b):
    shape = preset(name).shape
    assert math.isclose(shape.total_params / 1e9, float(total_b), rel_tol=0.01)
    if active_b is not None:
        active = (shape.active_params_without_embedding, shape.active_params)
        assert any(matches_published(a / 1e9, active_b) for a in active)


def test_the_computed_counts_match_a_hand_count():
    # Llama-3.1-8B: embeddings 2 × 128256 × 4096; per layer q and o 4096², k and v 4096 × 1024,
    # MLP 3 × 4096 × 14336, two norms; one final norm.
    per_layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert (
        preset("Llama-3.1-8B").shape.total_params
        == 2 * 128256 * 4096 + 32 * per_layer + 4096
        == 8_030_261_248
    )


def test_weights_in_bytes_total_and_read_per_token():
    dense = weight_bytes(preset("Llama-3.1-8B").shape, 1.0)
    assert dense.total == 8_030_261_248
    assert dense.read_per_token == dense.total - 128256 * 4096  # the input table is looked up, not read
    moe = weight_bytes(preset("gpt-oss-20b").shape, 0.5)
    assert moe.total == preset("gpt-oss-20b").shape.total_params * 0.5
    assert moe.read_per_token < moe.total / 5
    with pytest.raises(ValueError):
        weight_bytes(preset("Llama-3.1-8B").shape, 0)


# Every family reads -------------------------------------------------------------------------

QWEN2_57B_A14B = {  # the shape fields of Qwen/Qwen2-57B-A14B's config.json
    "architectures": ["Qwen2MoeForCausalLM"],
    "model_type": "qwen2_moe",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "moe_intermediate_size": 2560,
    "shared_expert_intermediate_size": 20480,
    "num_attention_heads": 28,
    "num_experts": 64,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "decoder_sparse_step": 1,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "tie_word_embeddings": False,
    "vocab_size": 151936,
}
DEEPSEEK_V2 = {  # deepseek-ai/DeepSeek-V2.5's shape fields
    "architectures": ["DeepseekV2ForCausalLM"],
    "model_type": "deepseek_v2",
    "first_k_dense_replace": 1,
    "hidden_size": 5120,
    "intermediate_size": 12288,
    "kv_lora_rank": 512,
    "moe_intermediate_size": 1536,
    "n_routed_experts": 160,
    "n_shared_experts": 2,
    "num_attention_heads": 128,
    "num_experts_per_tok": 6,
    "num_hidden_layers": 60,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "vocab_size": 102400,
}
GEMMA3_NESTED = {  # Gemma 3's multimodal wrapper: the language model sits in text_config
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "head_dim": 128,
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "num_attention_heads": 32,
        "num_hidden_layers": 62,
        "num_key_value_heads": 16,
        "sliding_window": 1024,
    },
    "vision_config": {"hidden_size": 1152, "num_hidden_layers": 27},
}
MISTRAL_V0_1 = {**config_of("Mistral-7B-v0.3"), "sliding_window": 4096, "vocab_size": 32000}
QWEN3_8B = {  # Qwen/Qwen3-8B's shape fields
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "head_dim": 128,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_attention_heads": 32,
    "num_hidden_layers": 36,
    "num_key_value_heads": 8,
    "max_position_embeddings": 40960,
    "max_window_layers": 36,
    "sliding_window": None,
    "use_sliding_window": False,
    "tie_word_embeddings": False,
    "vocab_size": 151936,
}


def kinds(shape) -> dict[AttentionKind, int]:
    return {kind: shape.layers_of_kind(kind) for kind in AttentionKind if shape.layers_of_kind(kind)}


@pytest.mark.parametrize(
    ("config", "family", "layer_kinds"),
    [
        (config_of("Llama-3.1-8B"), "llama", {AttentionKind.FULL: 32}),
        (config_of("Llama-3.2-1B"), "llama", {AttentionKind.FULL: 16}),
        (config_of("Qwen2.5-0.5B"), "qwen2", {AttentionKind.FULL: 24}),
        (QWEN3_8B, "qwen3", {AttentionKind.FULL: 36}),
        (config_of("Mistral-7B-v0.3"), "mistral", {AttentionKind.FULL: 32}),
        (MISTRAL_V0_1, "mistral", {AttentionKind.SLIDING: 32}),
        (config_of("Mixtral-8x7B"), "mixtral", {AttentionKind.FULL: 32}),
        (config_of("Gemma-2-9B"), "gemma2", {AttentionKind.SLIDING: 21, AttentionKind.FULL: 21}),
        (GEMMA3_NESTED, "gemma3_text", {AttentionKind.SLIDING: 52, AttentionKind.FULL: 10}),
        (config_of("gpt-oss-120b"), "gpt_oss", {AttentionKind.SLIDING: 18, AttentionKind.FULL: 18}),
        (DEEPSEEK_V2, "deepseek_v2", {AttentionKind.MLA: 60}),
        (config_of("DeepSeek-V3"), "deepseek_v3", {AttentionKind.MLA: 61}),
        (QWEN2_57B_A14B, "qwen2_moe", {AttentionKind.FULL: 28}),
        (config_of("Qwen3-30B-A3B"), "qwen3_moe", {AttentionKind.FULL: 48}),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_every_family_reads(config, family, layer_kinds):
    shape = read_config(config)
    assert shape.family == family
    assert kinds(shape) == layer_kinds
    assert read_config(json.dumps(config)) == shape  # the JSON text reads as its dict does


def test_gemma_3_slides_five_layers_then_attends_fully_once_and_ties_its_embeddings():
    shape = read_config(GEMMA3_NESTED)
    full = [i for i, layer in enumerate(shape.layer_attention) if layer.kind is AttentionKind.FULL]
    assert full == list(range(5, 62, 6))
    assert shape.sliding_window == 1024
    assert shape.tied_embeddings and shape.vocab_size == 262_208  # Gemma3TextConfig's defaults


def test_gemma_2_and_gpt_oss_slide_on_even_layers():
    for shape in (preset("Gemma-2-9B").shape, read_config({**config_of("gpt-oss-20b"), "layer_types": None})):
        assert [layer.kind for layer in shape.layer_attention[:3]] == [
            AttentionKind.SLIDING,
            AttentionKind.FULL,
            AttentionKind.SLIDING,
        ]


def test_a_qwen_config_that_turns_its_window_on_slides_from_max_window_layers():
    shape = read_config(
        {**QWEN3_8B, "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 28}
    )
    assert kinds(shape) == {AttentionKind.FULL: 28, AttentionKind.SLIDING: 8}


def test_deepseek_keeps_its_first_layers_dense_and_shares_an_expert():
    experts = preset("DeepSeek-V3").shape.experts
    assert experts.moe_layers == tuple(range(3, 61))
    assert (experts.routed_experts, experts.experts_per_token, experts.shared_experts) == (256, 8, 1)
    assert math.isclose(read_config(DEEPSEEK_V2).total_params / 1e9, 236, rel_tol=0.01)  # DeepSeek-V2: 236B


def test_qwen2_moe_counts_its_shared_expert():
    experts = read_config(QWEN2_57B_A14B).experts
    assert (experts.shared_experts, experts.shared_expert_intermediate_size) == (1, 20480)
    assert math.isclose(read_config(QWEN2_57B_A14B).total_params / 1e9, 57.4, rel_tol=0.01)


# Configs felab cannot read ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_key_value_heads": None}, "num_key_value_heads: missing"),
        ({"hidden_size": "4096"}, "hidden_size: expected a whole number, got '4096'"),
        ({"num_hidden_layers": 0}, "num_hidden_layers: must be at least 1, got 0"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings: expected true or false, got 'no'"),
        ({"num_key_value_heads": 5}, "num_key_value_heads: 5 does not divide num_attention_heads 32"),
        (
            {"model_type": "mamba", "architectures": ["MambaForCausalLM"]},
            "model_type: 'mamba' is not a family",
        ),
        ({"model_type": None, "architectures": None}, "model_type: missing"),
        ({"layer_types": ["full_attention"] * 3}, "layer_types: expected a list of 32 entries"),
    ],
)
def test_a_config_that_cannot_be_read_names_its_field(change, message):
    config = {**config_of("Llama-3.1-8B"), **change}
    config = {key: value for key, value in config.items() if value is not None}
    with pytest.raises(ModelConfigError, match="^" + message.replace("(", r"\(")) as raised:
        read_config(config)
    assert raised.value.field == message.split(":")[0]


def test_text_that_is_not_a_json_object_is_refused():
    with pytest.raises(ModelConfigError, match=r"^config: not JSON"):
        read_config("{'hidden_size': 4096")
    with pytest.raises(ModelConfigError, match=r"^config: expected a JSON object"):
        read_config("[1, 2]")


def test_an_mla_config_names_its_missing_latent_size():
    config = {key: value for key, value in config_of("DeepSeek-V3").items() if key != "kv_lora_rank"}
    with pytest.raises(ModelConfigError, match=r"^kv_lora_rank: missing$"):
        read_config(config)


def test_unknown_fields_are_ignored():
    config = {
        **config_of("Llama-3.1-70B"),
        "quantization_config": {"quant_method": "fp8"},
        "felab_nonsense": [1],
    }
    assert read_config(config) == preset("Llama-3.1-70B").shape


def test_a_model_type_missing_is_read_from_the_architecture():
    config = {key: value for key, value in config_of("Mixtral-8x7B").items() if key != "model_type"}
    assert read_config(config) == preset("Mixtral-8x7B").shape


# Tensor parallelism ------------------------------------------------------------------------


def test_tensor_parallelism_splits_kv_heads_and_replicates_them_past_one_per_gpu():
    shape = preset("Llama-3.1-70B").shape  # 8 KV heads
    assert [kv_heads_per_gpu(shape, tp) for tp in (1, 2, 4, 8, 16)] == [8, 4, 2, 1, 1]
    at_16 = kv_bytes_for_sequence(shape, 1000, BF16, tensor_parallel=16)
    assert at_16.per_gpu == 2 * 80 * 1 * 128 * BF16 * 1000  # one head on each of the 16 GPUs
    assert at_16.total == 16 * at_16.per_gpu  # replicated: twice the single-GPU cache
    at_2 = kv_bytes_for_sequence(shape, 1000, BF16, tensor_parallel=2)
    assert at_2.total == kv_bytes_for_sequence(shape, 1000, BF16).per_gpu


def test_an_mla_latent_is_whole_on_every_gpu():
    shape = preset("DeepSeek-V3").shape
    one = kv_bytes_for_sequence(shape, 4096, BF16)
    eight = kv_bytes_for_sequence(shape, 4096, BF16, tensor_parallel=8)
    assert eight.per_gpu == one.per_gpu
    assert eight.total == 8 * one.per_gpu


def test_a_split_that_leaves_kv_heads_uneven_is_refused():
    shape = preset("Llama-3.1-70B").shape
    for tp in (3, 12, 0):
        with pytest.raises(ValueError):
            kv_heads_per_gpu(shape, tp)


# Properties ----------------------------------------------------------------------------------

SHAPES = [p.shape for p in PRESETS]


@given(
    shape=st.sampled_from(SHAPES),
    context=st.integers(min_value=0, max_value=2_000_000),
    more=st.integers(min_value=0, max_value=2_000_000),
    kv_bytes=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
    tp=st.sampled_from([1, 2, 4, 8]),
)
def test_more_context_never_lowers_the_kv_cache_and_no_sliding_layer_passes_its_window(
    shape, context, more, kv_bytes, tp
):
    shorter = kv_bytes_for_sequence(shape, context, kv_bytes, tp)
    longer = kv_bytes_for_sequence(shape, context + more, kv_bytes, tp)
    assert longer.per_gpu >= shorter.per_gpu
    for kind, value in shorter.by_kind_per_gpu.items():
        assert longer.by_kind_per_gpu[kind] >= value
    sliding_layers = shape.layers_of_kind(AttentionKind.SLIDING)
    if sliding_layers:
        per_token = kv_bytes_per_token(shape, kv_bytes, tp)[AttentionKind.SLIDING]
        assert longer.by_kind_per_gpu[AttentionKind.SLIDING] <= per_token * shape.sliding_window
        assert per_token == sliding_layers * 2 * kv_heads_per_gpu(shape, tp) * shape.head_dim * kv_bytes


# The module stays pure ------------------------------------------------------------------------


SHAPE_MODULES = ("model_shapes", "model_config", "model_weights", "model_kv_cache", "model_presets")


@pytest.mark.parametrize("module", [f"{name}.py" for name in SHAPE_MODULES])
def test_the_shape_modules_import_only_the_standard_library(module):
    path = Path(model_shapes.__file__).with_name(module)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a sibling in the engine package
                assert node.module in SHAPE_MODULES
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            assert name.split(".")[0] in sys.stdlib_module_names, f"{module} imports {name}"

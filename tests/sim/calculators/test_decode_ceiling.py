"""The decode-ceiling calculator (lessons 00, 04, 12) reproduces the course's worked examples. No database."""

import io
import json

import pytest
from django.core.management import call_command

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.models.model_presets import preset
from tests.support.calculators import outputs


@pytest.mark.parametrize(
    ("bandwidth", "model_gb", "ceiling"),
    [(546, 4.9, 111.4), (273, 4.9, 55.7), (546, 8.5, 64.2), (546, 4.0, 136.5)],
)
def test_decode_ceiling_reproduces_f4_and_lesson_04s_table(bandwidth, model_gb, ceiling):
    out = outputs("decode-ceiling", bandwidth_gbs=bandwidth, model_gb=model_gb)
    assert out["ceiling_tok_s"] == pytest.approx(ceiling, abs=0.05)


def test_decode_ceiling_model_size_from_bits_reproduces_lesson_04s_formula():
    assert outputs("decode-ceiling", quant="q8_0")["model_gb"] == pytest.approx(8.5)
    assert outputs("decode-ceiling", bits_per_weight=8.5, quant="f16")["model_gb"] == pytest.approx(8.5)


def test_decode_ceiling_efficiency_band_and_measured_share_reproduce_lesson_04s_formula():
    out = outputs("decode-ceiling", bandwidth_gbs=546, model_gb=4.9, measured_tok_s=86)
    assert out["expected_low_tok_s"] == pytest.approx(66.9, abs=0.05)
    assert out["expected_high_tok_s"] == pytest.approx(94.7, abs=0.05)
    assert out["efficiency_pct"] == pytest.approx(77.2, abs=0.05)
    assert outputs("decode-ceiling")["efficiency_pct"] is None


def test_usable_memory_and_largest_model_reproduce_lesson_00s_formulas():
    out = outputs("decode-ceiling", ram_gb=36)
    assert out["usable_gb"] == pytest.approx(25.2)
    assert out["largest_model_b"] == pytest.approx(42.0)


def test_moe_reads_only_its_active_parameters_lesson_12s_formula():
    # On the 128 GB M4 Max: neither model's weights fit the 36 GB Mac's 70%.
    dense = outputs("decode-ceiling", params_b=70, ram_gb=128)
    moe = outputs("decode-ceiling", params_b=117, active_params_b=5.1, ram_gb=128)
    assert moe["ceiling_tok_s"] / dense["ceiling_tok_s"] == pytest.approx(13.7, abs=0.05)
    assert moe["model_gb"] / dense["model_gb"] == pytest.approx(1.7, abs=0.05)


def test_active_parameters_cannot_exceed_the_total():
    with pytest.raises(ParamError) as error:
        get("decode-ceiling").run({"params_b": 8, "active_params_b": 9})
    assert error.value.param == "active_params_b"


# Every sequence's KV cache is read at every step; weights and KV must fit (issue 21) ------------


def test_the_ceiling_at_32k_tokens_is_lower_than_at_1k():
    at_1k = outputs("decode-ceiling", context_tokens=1024)["ceiling_tok_s"]
    at_32k = outputs("decode-ceiling", context_tokens=32_768)["ceiling_tok_s"]
    assert at_32k < at_1k < outputs("decode-ceiling")["ceiling_tok_s"]
    # 546 GB/s ÷ (4.8 GB of weights + 32,768 × 131,072 B of KV).
    assert at_32k == pytest.approx(546 / (4.8 + 32_768 * 131_072 / 1e9))


def test_a_batch_shares_the_weights_and_reads_each_sequences_kv():
    out = outputs("decode-ceiling", batch=8, context_tokens=4096, ram_gb=128)
    kv_gb = 8 * 4096 * 131_072 / 1e9
    assert out["kv_gb_per_step"] == pytest.approx(kv_gb)
    assert out["ceiling_tok_s"] == pytest.approx(546 / (4.8 + kv_gb))
    assert out["total_tok_s"] == pytest.approx(8 * 546 / (4.8 + kv_gb))
    assert out["kv_share_pct"] == pytest.approx(100 * kv_gb / (4.8 + kv_gb))


def test_usable_memory_and_largest_model_follow_the_memory_entered():
    h100 = outputs("decode-ceiling", bandwidth_gbs=3350, ram_gb=85.9, memory_utilization=0.9)
    assert h100["usable_gb"] == pytest.approx(77.31)
    assert h100["largest_model_b"] == pytest.approx(77.31 / 0.6)  # Q4_K_M: 4.8 bits = 0.6 B


def test_settings_that_do_not_fit_give_no_ceiling_but_say_why():
    out = outputs("decode-ceiling", params_b=70)  # 42 GB of weights in a 36 GB Mac's 25.2
    assert out["fits"] == "no"
    assert out["memory_needed_gb"] == pytest.approx(42)
    assert out["ceiling_tok_s"] is None and out["total_tok_s"] is None
    assert outputs("decode-ceiling", context_tokens=8192)["largest_batch"] == int(
        (25.2 - 4.8) * 1e9 // (8192 * 131_072)
    )


def test_a_measured_speed_above_the_ceiling_is_flagged_impossible_with_its_likely_causes():
    out = outputs("decode-ceiling", bandwidth_gbs=546, model_gb=4.9, measured_tok_s=490)
    assert out["efficiency_pct"] == pytest.approx(440, abs=0.5)  # the 440%
    assert out["measured_check"].startswith("impossible at these settings")
    assert "MoE" in out["measured_check"] and "speculative decoding" in out["measured_check"]
    assert outputs("decode-ceiling", model_gb=4.9, measured_tok_s=86)["measured_check"].startswith("possible")
    assert outputs("decode-ceiling")["measured_check"] is None


def test_the_measurement_is_drawn_on_the_chart():
    calculator = get("decode-ceiling")
    params = calculator.validate({"measured_tok_s": "300"})
    drawn = [
        series for series in calculator.chart(params, [])["data"] if series["name"] == "your measurement"
    ]
    assert drawn and drawn[0]["y"] == [300]


@pytest.mark.django_db
def test_a_measured_point_stays_in_the_shareable_address(client):
    html = client.get("/sim/calc/decode-ceiling/", {"measured_tok_s": "300"}).content.decode()
    assert "decode-ceiling.json?measured_tok_s=300" in html


# A model chosen or pasted fills the sizes (issue 21) ------------------------------------------

DECODE_CALCULATORS = ("decode-ceiling", "roofline")


@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_llama_70b_as_a_preset_and_as_its_pasted_config_give_the_same_outputs(name):
    settings = {"context_tokens": 32_768, "batch": 4, "memory_gb": 200, "ram_gb": 200}
    settings = {k: v for k, v in settings.items() if k in get(name).defaults}
    by_preset = outputs(name, model="Llama-3.1-70B", **settings)
    pasted = outputs(name, model_config=json.dumps(preset("Llama-3.1-70B").config), **settings)
    assert by_preset == pasted
    shape = preset("Llama-3.1-70B").shape
    assert by_preset["params_used_b"] == shape.total_params / 1e9 == pytest.approx(70.55, abs=0.01)
    # A dense model reads every weight but the input embedding table, of which a token reads a row.
    assert by_preset["active_params_used_b"] == pytest.approx((shape.total_params - 128_256 * 8192) / 1e9)
    assert by_preset["kv_bytes_per_token_used"] == 2 * 80 * 8 * 128 * 2 == 327_680
    assert by_preset["kv_gb_per_step"] == pytest.approx(4 * 32_768 * 327_680 / 1e9)
    # The typed sizes are ignored once a model is chosen.
    assert outputs(name, model="Llama-3.1-70B", params_b=1, kv_bytes_per_token=1, **settings) == by_preset


@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_a_sliding_window_model_costs_less_kv_per_token_at_a_long_context(name):
    # gpt-oss-20b: 12 full layers of 2 × 8 × 64 × 2 B and 12 sliding ones keeping 128 tokens.
    at_128 = outputs(name, model="gpt-oss-20b", context_tokens=128)
    at_32k = outputs(name, model="gpt-oss-20b", context_tokens=32_768)
    assert at_128["kv_bytes_per_token_used"] == 2 * 24 * 8 * 64 * 2 == 49_152
    assert at_32k["kv_bytes_per_token_used"] == pytest.approx(24_576 + 24_576 * 128 / 32_768)
    assert at_32k["kv_bytes_per_token_used"] == pytest.approx(24_672)
    assert at_32k["active_params_used_b"] < at_32k["params_used_b"] / 4  # the MoE's routed experts


@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_a_cache_type_halves_a_models_kv_but_leaves_a_typed_figure_alone(name):
    f16 = outputs(name, model="Qwen2.5-7B", context_tokens=1000)
    fp8 = outputs(name, model="Qwen2.5-7B", context_tokens=1000, kv_dtype="fp8")
    assert f16["kv_bytes_per_token_used"] == 2 * 28 * 4 * 128 * 2 == 57_344
    assert fp8["kv_bytes_per_token_used"] == 57_344 / 2
    assert outputs(name, kv_dtype="fp8")["kv_bytes_per_token_used"] == 131_072  # typed: as typed


@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_typed_sizes_still_work_when_no_model_is_chosen(name):
    out = outputs(name, params_b=13, active_params_b=2, kv_bytes_per_token=1000)
    assert (out["params_used_b"], out["active_params_used_b"], out["kv_bytes_per_token_used"]) == (
        13,
        2,
        1000,
    )


@pytest.mark.django_db  # the JSON endpoint's rate limit counts in the database
@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_an_unreadable_config_is_a_400_naming_the_missing_field(client, name):
    config = dict(preset("Llama-3.1-70B").config)
    del config["num_hidden_layers"]
    response = client.get(f"/sim/calc/{name}.json", {"model_config": json.dumps(config)})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "model_config"
    assert "num_hidden_layers: missing" in error["message"]


@pytest.mark.django_db  # the JSON endpoint's rate limit counts in the database
@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_the_json_endpoint_and_the_cli_take_the_config(client, tmp_path, name):
    config = json.dumps(preset("Llama-3.1-70B").config)
    response = client.get(f"/sim/calc/{name}.json", {"model_config": config, "context_tokens": "1000"})
    assert response.status_code == 200
    assert response.json()["outputs"]["kv_bytes_per_token_used"]["value"] == 327_680
    assert (
        "2 × 80 layers × 8 KV heads × 128 × 2 B"
        in response.json()["outputs"]["kv_bytes_per_token_used"]["formula"]
    )
    path = tmp_path / "config.json"
    path.write_text(config)
    out = io.StringIO()
    call_command("calc", name, "--model-config", str(path), "--context-tokens", "1000", "--json", stdout=out)
    assert json.loads(out.getvalue())["outputs"]["kv_bytes_per_token_used"]["value"] == 327_680


# The compute ceiling beside the bandwidth's (issue 21) -------------------------------------------

H100_FP8 = {"bandwidth_gbs": 3350, "peak_tflops": 989, "peak_fp8_tflops": 1979, "ram_gb": 85.9}
H100_FP8 |= {"memory_utilization": 0.9, "overhead_gb": 2, "bits_per_weight": 8, "batch": 512}


def test_a_big_batch_at_context_0_is_compute_bound_as_roofline_says():
    out = outputs("decode-ceiling", **H100_FP8)
    # 2 × 8e9 weights × 512 sequences ÷ 1,979 TFLOP/s against 8 GB ÷ 3,350 GB/s.
    compute_s, memory_s = 2 * 8e9 * 512 / 1979e12, 8e9 / 3350e9
    assert out["bound"] == "compute"
    assert out["compute_ceiling_tok_s"] == pytest.approx(1 / compute_s)
    assert out["memory_ceiling_tok_s"] == pytest.approx(1 / memory_s)
    assert out["ceiling_tok_s"] == pytest.approx(1 / compute_s)  # the lower of the two
    assert out["total_tok_s"] == pytest.approx(512 / compute_s) == pytest.approx(123_688, abs=1)
    assert out["peak_tflops_used"] == 1979
    roofline = outputs(
        "roofline", batch=512, bytes_per_weight=1, peak_tflops=989, peak_fp8_tflops=1979, params_b=8
    )
    assert roofline["bound"] == "compute"
    assert roofline["attainable_tok_s"] == pytest.approx(out["total_tok_s"])


def test_1000_token_contexts_make_it_memory_bound_at_about_22800_tok_s():
    out = outputs("decode-ceiling", **H100_FP8, context_tokens=1000)
    kv = 512 * 1000 * 131_072
    assert out["bound"] == "memory"
    assert out["total_tok_s"] == pytest.approx(512 * 3350e9 / (8e9 + kv)) == pytest.approx(22_836, abs=1)


def test_without_a_peak_only_the_bandwidth_ceiling_is_given_and_16_bit_weights_use_the_bf16_peak():
    out = outputs("decode-ceiling", batch=64)
    assert out["bound"] is None and out["compute_ceiling_tok_s"] is None and out["peak_tflops_used"] is None
    assert out["ceiling_tok_s"] == out["memory_ceiling_tok_s"]
    assert outputs("decode-ceiling", **{**H100_FP8, "bits_per_weight": 16})["peak_tflops_used"] == 989
    assert outputs("roofline", peak_fp8_tflops=1979)["peak_tflops_used"] == 989  # BF16 weights
    assert outputs("decode-ceiling", **{**H100_FP8, "peak_tflops": None})["peak_tflops_used"] == 1979


def test_the_gpu_presets_carry_both_peaks():
    from felab_sim.engine.course.presets import HARDWARE

    h100 = next(p for p in HARDWARE if p.name == "NVIDIA H100 SXM5 80GB")
    assert (h100.values["peak_tflops"], h100.values["peak_fp8_tflops"]) == (989.4, 1978.9)


@pytest.mark.parametrize("name", DECODE_CALCULATORS)
def test_a_callers_settings_without_the_model_and_fp8_inputs_still_compute(name):
    # The chain (felab_sim/engine/course/chain.py) times its steps with compute_with on settings of its
    # own, written before these inputs existed: they read as typed sizes and one peak.
    added = {"model", "model_config", "kv_dtype", "peak_fp8_tflops"} | (
        {"peak_tflops"} if name == "decode-ceiling" else set()
    )
    calculator = get(name)
    older = {k: v for k, v in calculator.validate({}).items() if k not in added}
    assert calculator.compute_with("gb_per_step", older) == outputs(name)["gb_per_step"]


# A model's own file, tensor by tensor -------------------------------------------------------


def test_gpt_oss_as_published_reads_its_16_bit_attention_and_output_head_at_16_bits():
    # gpt-oss-20b's 3.6B active parameters are 0.64B of attention and 0.58B of output head, kept in
    # BF16, and 4 experts a layer (2.39B) in MXFP4, 4 bits and an 8-bit scale per 32: 4.25 bits.
    attention_and_head = (0.637203 + 0.579133 + 0.002213) * 2  # GB, with the router, all in BF16
    experts = 24 * 4 * 3 * 2880 * 2880 * 4.25 / 8 / 1e9
    expert_biases = 24 * 4 * (2 * 2880 + 2880) * 2 / 1e9
    expected = attention_and_head + experts + expert_biases
    out = outputs("decode-ceiling", model="gpt-oss-20b", quant="published", measured_tok_s=118)
    assert out["model_gb"] == pytest.approx(13.76, abs=0.01)  # the file Hugging Face lists: 13.8 GB
    assert out["gb_per_token"] == pytest.approx(expected, rel=1e-3) == pytest.approx(3.71, abs=0.01)
    assert out["ceiling_tok_s"] == pytest.approx(546 / 3.708, abs=0.1)
    assert out["efficiency_pct"] == pytest.approx(80.1, abs=0.1)
    # Spreading the file's average bits over the active parameters would give 2.4 GB and 230 tok/s.
    spread = outputs("decode-ceiling", params_b=20.9, active_params_b=3.6, model_gb=13.8)
    assert spread["gb_per_token"] < out["gb_per_token"] * 0.7


def test_gpt_oss_120b_as_published_holds_65_gb_and_reads_5_gb_a_token():
    out = outputs("decode-ceiling", model="gpt-oss-120b", quant="published", ram_gb=128)
    assert out["model_gb"] == pytest.approx(65.25, abs=0.01)
    assert out["gb_per_token"] == pytest.approx(5.0, abs=0.01)
    assert out["ceiling_tok_s"] == pytest.approx(109.1, abs=0.1)


def test_a_batch_of_a_published_moe_reads_more_experts_but_never_more_than_its_file():
    one = outputs("decode-ceiling", model="gpt-oss-120b", quant="published", ram_gb=128)
    many = outputs("decode-ceiling", model="gpt-oss-120b", quant="published", ram_gb=128, batch=512)
    assert one["gb_per_token"] < many["gb_per_token"] <= many["model_gb"]


def test_as_published_is_refused_for_a_model_whose_config_does_not_say_how_its_file_stores_weights():
    for settings in ({}, {"model": "Llama-3.1-8B"}):
        with pytest.raises(ParamError) as error:
            outputs("decode-ceiling", quant="published", **settings)
        assert error.value.param == "quant" and "gpt-oss-20b" in str(error.value)
    # Bits typed in win over the quantization, as they do for every other choice.
    assert outputs("decode-ceiling", quant="published", bits_per_weight=4)["bits_per_weight"] == 4

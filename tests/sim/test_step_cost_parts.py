"""Each part of the step cost for mixtures of experts, MLA and the weight formats, checked by hand
arithmetic from the model's config (felab_sim/engine/hardware/model_cost.py and step_cost.py): remove a
part and its test fails."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from felab_sim.engine.hardware.calibration import (
    DEQUANT_WEIGHTS_PER_S,
    FOUR_BIT_GROUPED_SHARE,
    SMALL_KERNEL_LATENCY_S,
    engine_calibration,
)
from felab_sim.engine.hardware.hardware import hardware_preset
from felab_sim.engine.hardware.model_cost import Parallelism, kernel_split, model_cost
from felab_sim.engine.hardware.step_cost import step_cost
from felab_sim.engine.hardware.step_load import combined, decode_load, prefill_load
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.models.precisions import MXFP4_BYTES_PER_WEIGHT, PRECISIONS, weight_format

GPT_OSS = preset("gpt-oss-120b").shape
DEEPSEEK = preset("DeepSeek-V3").shape
H100, H200, B200 = (hardware_preset(name) for name in ("h100-sxm", "h200", "b200"))
# DeepSeek-V3's config: 61 layers, the first 3 dense, hidden 7,168, q_lora 1,536, kv_lora 512,
# rotary 64, 256 routed experts of width 2,048, 8 a token, one shared expert, 128 heads.
DS_LAYERS, DS_MOE, DS_HIDDEN = 61, 58, 7168
DS_REPLICATED = DS_LAYERS * DS_HIDDEN * (1536 + 512 + 64) + DS_MOE * DS_HIDDEN * 256


def test_mxfp4_is_four_bits_and_a_byte_scale_per_32():
    assert MXFP4_BYTES_PER_WEIGHT == PRECISIONS["mxfp4"] == (32 * 4 + 8) / 32 / 8 == 0.53125
    assert weight_format(PRECISIONS["mxfp4"]).experts_only
    assert weight_format(1.0).name == "fp8" and weight_format(0.7).matrix_bytes == 0.7


def test_mxfp4_reads_gpt_oss_experts_at_its_bytes_and_everything_else_in_bf16():
    cost = model_cost(GPT_OSS, PRECISIONS["mxfp4"], 2.0, Parallelism())
    step = step_cost(cost, B200, engine_calibration(B200), decode_load(1, 100, GPT_OSS.sliding_window))
    table = GPT_OSS.vocab_size * GPT_OSS.hidden_size
    routed = 36 * 128 * GPT_OSS.expert_params()
    # the body a token reads (attention, router, norms; not the input table) and the head in BF16
    others = GPT_OSS.total_params - routed - 2 * table
    one_token = 36 * 4 * GPT_OSS.expert_params()  # 4 of 128 experts in each of 36 layers
    assert step.weight_bytes == pytest.approx(2 * (others + table) + MXFP4_BYTES_PER_WEIGHT * one_token)
    assert cost.weight_bytes_per_gpu == pytest.approx(
        2 * (others + 2 * table) + MXFP4_BYTES_PER_WEIGHT * routed
    )


def test_fp8_block_scales_add_four_bytes_a_block_and_a_quantizing_kernel_before_each_fp8_product():
    scaled = model_cost(DEEPSEEK, 1.0, 2.0, Parallelism())
    plain = model_cost(replace(DEEPSEEK, weight_block=None), 1.0, 2.0, Parallelism())
    assert DEEPSEEK.weight_block == 128
    assert scaled.weight_bytes_per_gpu == pytest.approx(plain.weight_bytes_per_gpu * (1 + 4 / 128**2))
    load = decode_load(4, 1000)
    assert step_cost(scaled, H200, engine_calibration(H200), load).weight_bytes == pytest.approx(
        step_cost(plain, H200, engine_calibration(H200), load).weight_bytes * (1 + 4 / 128**2)
    )
    # before q_a/kv_a, q_b, the output, gate-up and down: 5 a dense layer; MoE layers add the
    # shared expert's two (the grouped experts' two stand for the dense MLP's)
    assert kernel_split(scaled)[1] - kernel_split(plain)[1] == 3 * 5 + DS_MOE * 7
    assert kernel_split(scaled)[0] == kernel_split(plain)[0]
    # the scales do not move FP8 off its tensor cores' peak
    assert scaled.bytes_per_param == 1.0


def test_kernels_are_counted_from_the_layers():
    llama = preset("Llama-3.1-8B").shape
    assert kernel_split(model_cost(llama, 2.0, 2.0, Parallelism())) == (4 * 32 + 1, 6 * 32)
    # MLA: 4 products in place of QKV's one (3 more), its two norms; MoE: the router (+1 product),
    # top-k, the sort and the weighted sum (+3); the shared expert: 2 products and its activation
    matrix = DS_LAYERS * (4 + 3) + DS_MOE * (1 + 2) + 1
    small = DS_LAYERS * (6 + 2) + DS_MOE * (3 + 1)
    assert kernel_split(model_cost(DEEPSEEK, 2.0, 2.0, Parallelism())) == (matrix, small) == (602, 720)
    calibration = engine_calibration(H200)
    step = step_cost(model_cost(DEEPSEEK, 2.0, 2.0, Parallelism(8)), H200, calibration, decode_load(1, 10))
    assert calibration.small_kernel_s == SMALL_KERNEL_LATENCY_S < calibration.kernel_latency_s
    assert step.fixed_s == pytest.approx(
        matrix * calibration.kernel_latency_s + small * SMALL_KERNEL_LATENCY_S
    )


def test_mla_down_projections_and_routers_are_whole_on_every_gpu_the_rest_split():
    one = model_cost(DEEPSEEK, 2.0, 2.0, Parallelism())
    eight = model_cost(DEEPSEEK, 2.0, 2.0, Parallelism(8))
    assert eight.body_params == pytest.approx((one.body_params - DS_REPLICATED) / 8 + DS_REPLICATED)


def test_mla_attends_at_its_query_key_and_value_widths():
    # 2 × (128 + 64) for QKᵀ and 2 × 128 for PV a head, 16 heads a GPU at TP 8, every layer
    cost = model_cost(DEEPSEEK, 1.0, 2.0, Parallelism(8))
    assert cost.attention_flops_per_token_context == 2 * (128 + 64 + 128) * 16 * DS_LAYERS
    # the cache: the 512 + 64 latent a layer, whole on every GPU
    assert cost.kv_full_bytes_per_token == (512 + 64) * 2 * DS_LAYERS


def test_mla_decodes_over_the_latent_and_prefills_over_expanded_heads():
    # vLLM's and SGLang's MLA: a decoding token's query absorbed into the 512 + 64 latent, QKᵀ at
    # 2 × 576 and PV at 2 × 512 a head; a prompt's tokens at 2 × (128 + 64) and 2 × 128.
    parallel = Parallelism(8)
    cost = model_cost(DEEPSEEK, 1.0, 2.0, parallel)
    calibration = engine_calibration(H200)
    decode = step_cost(cost, H200, calibration, decode_load(64, 1000), parallel)
    assert decode.attention_flops == pytest.approx(2176 * 16 * DS_LAYERS * 64 * 1000)
    prefill = step_cost(cost, H200, calibration, prefill_load(1000), parallel)
    assert prefill.attention_flops == pytest.approx(640 * 16 * DS_LAYERS * 1000 * 1001 / 2)
    both = step_cost(cost, H200, calibration, combined(decode_load(64, 1000), prefill_load(1000)), parallel)
    assert both.attention_flops == pytest.approx(decode.attention_flops + prefill.attention_flops)
    # Ordinary attention is the same either way: 4 × head size a head.
    dense = model_cost(preset("Llama-3.1-8B").shape, 2.0, 2.0, Parallelism())
    step = step_cost(dense, H200, calibration, decode_load(8, 1000))
    assert step.attention_flops == pytest.approx(4 * 128 * 32 * 32 * 8 * 1000)


def test_a_grouped_expert_product_runs_at_the_rate_of_its_tokens_per_expert():
    cost = model_cost(GPT_OSS, 2.0, 2.0, Parallelism())
    calibration = engine_calibration(H200)
    step = step_cost(cost, H200, calibration, prefill_load(8192, GPT_OSS.sliding_window))
    assert step.experts_touched == pytest.approx(128)
    assert step.expert_rows == pytest.approx(8192 * 4 / 128)  # 256 rows each expert
    large = calibration.flops(H200, 2.0)
    assert calibration.matrix_share(8192) == 1.0 and calibration.matrix_share(256) < 0.9
    assert step.grouped_rate == pytest.approx(large * calibration.matrix_share(256))
    table = GPT_OSS.vocab_size * GPT_OSS.hidden_size
    body = GPT_OSS.total_params - 36 * 128 * GPT_OSS.expert_params() - 2 * table  # attention, router, norms
    grouped = 2 * 36 * 8192 * 4 * GPT_OSS.expert_params()
    assert step.grouped_flops == pytest.approx(grouped)
    dense = 2 * body * 8192 + 2 * table  # the output head for the one sampled token
    assert step.linear_flops == pytest.approx(dense + grouped)
    assert step.linear_compute_s == pytest.approx(dense / large + step.grouped_flops / step.grouped_rate)


def test_four_bit_weights_are_unpacked_on_hopper_and_multiplied_as_they_are_on_blackwell():
    cost = model_cost(GPT_OSS, PRECISIONS["mxfp4"], 2.0, Parallelism(4))
    load = decode_load(16, 1400, GPT_OSS.sliding_window)
    hopper = step_cost(cost, H100, engine_calibration(H100), load, Parallelism(4))
    touched = 128 * (1 - (1 - 4 / 128) ** 16)  # of the 128, each a quarter on each of 4 GPUs
    unpacked = 36 * touched * GPT_OSS.expert_params() / 4
    assert hopper.dequantized_weights == pytest.approx(unpacked)
    assert hopper.dequant_s == pytest.approx(unpacked / DEQUANT_WEIGHTS_PER_S)
    assert hopper.linear_compute_s > hopper.dequant_s > hopper.weights_s  # the unpacking binds
    assert not H100.native_fp4 and B200.native_fp4
    blackwell = step_cost(cost, B200, engine_calibration(B200), load, Parallelism(4))
    assert blackwell.dequant_s == 0 and blackwell.linear_compute_s < blackwell.weights_s
    bf16 = model_cost(GPT_OSS, 2.0, 2.0, Parallelism(4))
    assert step_cost(bf16, H100, engine_calibration(H100), load, Parallelism(4)).dequant_s == 0


def test_a_grouped_product_of_four_bit_experts_runs_at_its_fitted_share_of_the_bf16_rate():
    # A factor fitted on the 4-bit fitted serving runs' TTFT (calibration.py) slows the grouped
    # products of MXFP4 experts; experts in BF16 or FP8 are not slowed.
    assert 0 < FOUR_BIT_GROUPED_SHARE < 1
    calibration = engine_calibration(B200)
    load = prefill_load(8192, GPT_OSS.sliding_window)
    four_bit = step_cost(
        model_cost(GPT_OSS, PRECISIONS["mxfp4"], 2.0, Parallelism(4)), B200, calibration, load, Parallelism(4)
    )
    rows = 8192 * 4 / 128
    assert four_bit.expert_rows == pytest.approx(rows)
    bf16_rate = calibration.flops(B200, 2.0) * calibration.matrix_share(rows)
    assert four_bit.grouped_rate == pytest.approx(bf16_rate * FOUR_BIT_GROUPED_SHARE)
    bf16 = step_cost(model_cost(GPT_OSS, 2.0, 2.0, Parallelism(4)), B200, calibration, load, Parallelism(4))
    assert bf16.grouped_rate == pytest.approx(bf16_rate)
    assert four_bit.grouped_flops == pytest.approx(bf16.grouped_flops)
    slower = four_bit.grouped_flops / four_bit.grouped_rate - bf16.grouped_flops / bf16.grouped_rate
    assert four_bit.linear_compute_s - bf16.linear_compute_s == pytest.approx(slower)


def test_unpacking_runs_beside_the_products_of_the_weights_it_unpacks():
    # The ordinary cores unpack 4-bit weights while the tensor cores multiply them: the longer of
    # the two binds. A decode step's few rows leave the unpacking longer; a prompt's many, the
    # products.
    parallel = Parallelism(4)
    cost = model_cost(GPT_OSS, PRECISIONS["mxfp4"], 2.0, parallel)
    calibration = engine_calibration(H100)
    no_unpacking = replace(calibration, dequant_weights_per_s=None)
    decode = decode_load(16, 1400, GPT_OSS.sliding_window)
    step = step_cost(cost, H100, calibration, decode, parallel)
    products = step.grouped_flops / step.grouped_rate
    assert step.dequant_s > products > 0
    assert step.unpacking_beyond_s == pytest.approx(step.dequant_s - products)
    assert step.unpacked_products_s == pytest.approx(products)
    without = step_cost(cost, H100, no_unpacking, decode, parallel)
    assert step.linear_compute_s == pytest.approx(without.linear_compute_s - products + step.dequant_s)
    prompt = prefill_load(8192, GPT_OSS.sliding_window)
    step = step_cost(cost, H100, calibration, prompt, parallel)
    assert step.grouped_flops / step.grouped_rate > step.dequant_s > 0
    assert step.unpacking_beyond_s == 0
    without = step_cost(cost, H100, no_unpacking, prompt, parallel)
    assert step.linear_compute_s == pytest.approx(without.linear_compute_s)
    assert step.linear_flops == pytest.approx(without.linear_flops)


def test_a_dense_four_bit_models_unpacking_runs_beside_its_bodys_products():
    llama = preset("Llama-3.1-8B").shape
    cost = model_cost(llama, PRECISIONS["mxfp4"], 2.0, Parallelism())
    calibration = engine_calibration(H100)
    no_unpacking = replace(calibration, dequant_weights_per_s=None)
    body = llama.total_params - 2 * llama.vocab_size * llama.hidden_size
    for load in (decode_load(16, 1000), prefill_load(4096)):
        step = step_cost(cost, H100, calibration, load)
        without = step_cost(cost, H100, no_unpacking, load)
        products = 2 * body * load.tokens / step.flops
        assert step.unpacked_products_s == pytest.approx(products, rel=1e-3)
        assert step.dequant_s == pytest.approx(body / DEQUANT_WEIGHTS_PER_S, rel=1e-3)
        assert step.unpacking_beyond_s == pytest.approx(max(0.0, step.dequant_s - step.unpacked_products_s))
        assert step.linear_compute_s == pytest.approx(without.linear_compute_s + step.unpacking_beyond_s)
    assert step_cost(cost, H100, calibration, decode_load(16, 1000)).unpacking_beyond_s > 0
    assert step_cost(cost, H100, calibration, prefill_load(4096)).unpacking_beyond_s == 0


def test_under_expert_parallelism_the_busiest_gpu_sets_the_experts_time():
    parallel = Parallelism(tensor=8, expert=True)
    cost = model_cost(DEEPSEEK, 1.0, 2.0, parallel)
    calibration = engine_calibration(H200)
    step = step_cost(cost, H200, calibration, prefill_load(4096), parallel)
    mean = 4096 * 8 / 8  # applications a GPU: T × k ÷ n
    busiest = mean + math.sqrt(mean * (1 - 1 / 8) * 2 * math.log(8))
    assert step.grouped_flops == pytest.approx(2 * DS_MOE * busiest * DEEPSEEK.expert_params())
    tensor = step_cost(
        model_cost(DEEPSEEK, 1.0, 2.0, Parallelism(8)), H200, calibration, prefill_load(4096), Parallelism(8)
    )
    assert tensor.grouped_flops == pytest.approx(2 * DS_MOE * mean * DEEPSEEK.expert_params())

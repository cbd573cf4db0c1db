"""Each calculator reproduces its worked example from the course (by lesson number). No database."""

import math

import pytest

from felab_sim.charts.calc_charts import chart_json
from felab_sim.engine.calculators import CALCULATORS, UnknownCalculator, get
from felab_sim.engine.params import ParamError


def outputs(name: str, **params: object) -> dict[str, object]:
    return {key: out.value for key, out in get(name).run(params).outputs.items()}


def test_the_ten_calculators_of_the_issue_are_registered_by_name():
    assert list(CALCULATORS) == [
        "prefill",
        "prefix-cache",
        "decode-ceiling",
        "kv-cache",
        "speculative",
        "roofline",
        "sizing",
        "cost",
        "finetune-memory",
        "dpo",
    ]


def test_an_unknown_calculator_is_named_in_the_error():
    with pytest.raises(UnknownCalculator, match="'nope' is not a calculator"):
        get("nope")


# --------------------------------------------------------------------------- prefill (lesson 01)


@pytest.mark.parametrize(("prompt", "ttft_ms"), [(8000, 3215.0), (4000, 1615.0), (12, 19.8)])
def test_prefill_reproduces_lesson_01s_formula(prompt, ttft_ms):
    out = outputs("prefill", prompt_tokens=prompt)
    assert out["ttft_ms"] == pytest.approx(ttft_ms)
    assert out["uncached_tokens"] == prompt


def test_prefill_skips_cached_tokens():
    assert outputs("prefill", prompt_tokens=3050, cached_tokens=3008)["ttft_ms"] == pytest.approx(31.8)


def test_prefill_refuses_more_cached_tokens_than_the_prompt_has():
    with pytest.raises(ParamError) as error:
        get("prefill").run({"prompt_tokens": 10, "cached_tokens": 11})
    assert error.value.param == "cached_tokens"


# --------------------------------------------------------------------------- prefix-cache (lesson 06)


def test_prefix_cache_reproduces_lesson_06s_formula():
    out = outputs("prefix-cache", prefix_chars=12_120, suffix_chars=80)
    assert out["prompt_tokens"] == 3050
    assert out["cached_tokens"] == 3008  # 47 whole 256-character blocks
    assert out["uncached_tokens"] == 42
    assert out["ttft_warm_ms"] == pytest.approx(31.8)
    assert out["ttft_cold_ms"] == pytest.approx(1235.0)
    assert out["speedup"] == pytest.approx(1235 / 31.8)  # ≈ 39×


def test_variable_part_first_caches_nothing():
    out = outputs("prefix-cache", prefix_chars=12_120, suffix_chars=80, order="variable-first")
    assert out["cached_tokens"] == 0
    assert out["ttft_warm_ms"] == out["ttft_cold_ms"] == pytest.approx(1235.0)
    assert out["speedup"] == pytest.approx(1.0)


def test_a_partial_block_is_never_cached():
    assert outputs("prefix-cache", prefix_chars=255, suffix_chars=10)["cached_tokens"] == 0
    assert outputs("prefix-cache", prefix_chars=256, suffix_chars=10)["cached_tokens"] == 64


# --------------------------------------------------------------------------- decode-ceiling (lessons 00, 04, 12)


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
    dense = outputs("decode-ceiling", params_b=70)
    moe = outputs("decode-ceiling", params_b=117, active_params_b=5.1)
    assert moe["ceiling_tok_s"] / dense["ceiling_tok_s"] == pytest.approx(13.7, abs=0.05)
    assert moe["model_gb"] / dense["model_gb"] == pytest.approx(1.7, abs=0.05)


def test_active_parameters_cannot_exceed_the_total():
    with pytest.raises(ParamError) as error:
        get("decode-ceiling").run({"params_b": 8, "active_params_b": 9})
    assert error.value.param == "active_params_b"


# --------------------------------------------------------------------------- kv-cache (lesson 05)


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


# --------------------------------------------------------------------------- speculative (lesson 13)


def test_speculative_reproduces_lesson_13s_formula():
    out = outputs("speculative", acceptance=0.8, draft_tokens=4, draft_cost=0.1)
    assert out["tokens_per_pass"] == pytest.approx(3.36, abs=0.005)
    assert out["speedup"] == pytest.approx(2.40, abs=0.005)
    assert out["break_even_acceptance"] == pytest.approx(0.29, abs=0.005)


# Lesson 13's "k 8 → 0.45" is 0.4448 rounded to two places from above: within 0.006.
@pytest.mark.parametrize(("k", "alpha"), [(2, 0.17), (8, 0.45)])
def test_speculative_break_even_at_other_draft_lengths(k, alpha):
    assert outputs("speculative", draft_tokens=k)["break_even_acceptance"] == pytest.approx(alpha, abs=0.006)


@pytest.mark.parametrize(
    ("alpha", "speedups"),
    [(0.3, (1.16, 1.02, 0.89, 0.79)), (0.7, (1.82, 1.98, 1.91, 1.78)), (0.9, (2.26, 2.93, 3.26, 3.40))],
)
def test_speculative_reproduces_lesson_13s_grid(alpha, speedups):
    got = [outputs("speculative", acceptance=alpha, draft_tokens=k)["speedup"] for k in (2, 4, 6, 8)]
    assert got == pytest.approx(speedups, abs=0.006)


def test_full_acceptance_is_exact_and_a_costly_draft_never_pays():
    assert outputs("speculative", acceptance=1.0, draft_tokens=4)["tokens_per_pass"] == 5
    assert outputs("speculative", draft_cost=1.0)["break_even_acceptance"] == pytest.approx(1.0)


def test_speculative_refuses_a_free_draft():
    with pytest.raises(ParamError) as refused:
        get("speculative").run({"draft_cost": 0, "draft_tokens": 64})
    assert refused.value.param == "draft_cost"
    assert "greater than 0" in refused.value.message


def test_speculative_verify_pass_costs_more_past_lesson_13s_range():
    # Up to k = 9 the pass stays within one weight read; at 64 drafted it computes 65 positions.
    assert outputs("speculative", draft_tokens=8)["verify_pass_steps"] == 1
    assert outputs("speculative", draft_tokens=64)["verify_pass_steps"] == pytest.approx(6.5)
    nearly_free = dict(acceptance=0.99, draft_cost=0.001)
    assert outputs("speculative", **nearly_free, draft_tokens=64)["speedup"] == pytest.approx(7.3, abs=0.05)
    assert (
        outputs("speculative", **nearly_free, draft_tokens=64)["speedup"]
        < outputs("speculative", **nearly_free, draft_tokens=32)["speedup"]
    )


# --------------------------------------------------------------------------- roofline


def test_roofline_ridge_points_of_h100_and_h200():
    assert outputs("roofline")["ridge_flop_per_byte"] == pytest.approx(295, abs=0.5)
    assert outputs("roofline", bandwidth_gbs=4800)["ridge_flop_per_byte"] == pytest.approx(206, abs=0.5)


def test_decode_is_memory_bound_until_the_batch_reaches_the_ridge():
    single = outputs("roofline")
    assert single["bound"] == "memory"
    assert single["attainable_tok_s"] == pytest.approx(3350 / 16)  # the decode ceiling, bf16 8B
    assert outputs("roofline", batch=296)["bound"] == "compute"


# --------------------------------------------------------------------------- sizing (lessons 03, 15)


def test_sizing_reproduces_lesson_03s_replica_formula():
    out = outputs("sizing", peak_users=120, capacity=8, headroom=0.2)
    assert out["replicas"] == 15
    assert out["replicas_with_headroom"] == 18


def test_sizing_reproduces_lesson_15s_formula():
    out = outputs("sizing", peak_users=8, capacity=8, headroom=0, tickets_per_month=5_000_000)
    assert out["usd_per_ticket"] == pytest.approx(0.000075)
    assert out["serverless_usd_month"] == pytest.approx(375)
    assert out["dedicated_usd_month"] == pytest.approx(5840)
    assert out["crossover_tickets_month"] == pytest.approx(77.9e6, rel=0.001)
    assert out["cheaper"] == "serverless"


def test_sizing_defaults_are_the_capstones_one_replica_scenario():
    # Lesson 15's flags (200 users at peak, 5M tickets, $0.15 / $0.60, $8/GPU-h) and its worked example.
    out = outputs("sizing")
    assert out["replicas_with_headroom"] == 1
    assert out["serverless_usd_month"] == pytest.approx(375)
    assert out["dedicated_usd_month"] == pytest.approx(5840)
    assert out["crossover_tickets_month"] == pytest.approx(78e6, rel=0.002)


def test_sizing_headroom_is_spare_capacity_not_a_second_rounding():
    # 200 users × 1.2 = 240 fit one replica of 256; rounding 1 replica × 1.2 up would buy two.
    assert outputs("sizing", peak_users=200, capacity=256, headroom=0.2)["replicas_with_headroom"] == 1
    assert outputs("sizing", peak_users=200, capacity=8, headroom=0.2)["replicas_with_headroom"] == 30


# --------------------------------------------------------------------------- cost (lessons 06, 08, 09, 10)


def test_cost_reproduces_lesson_09_and_08s_formulas():
    out = outputs("cost")
    assert out["usd_per_task"] == pytest.approx(0.000029)
    assert out["usd_per_1k_tasks"] == pytest.approx(0.029)
    assert out["batch_usd_per_1k_tasks"] == pytest.approx(0.0145)


def test_cached_input_reproduces_f20_and_stacks_with_batch():
    out = outputs("cost", cached_share=0.9, cached_price_ratio=0.5)
    assert out["input_bill_pct"] == pytest.approx(55)
    assert out["cached_usd_per_1k_tasks"] == pytest.approx((200 * 0.55 * 0.07 + 50 * 0.30) / 1e3)
    assert out["batch_cached_usd_per_1k_tasks"] == pytest.approx(out["cached_usd_per_1k_tasks"] / 2)


def test_fine_tune_bill_reproduces_lesson_10s_formulas():
    out = outputs("cost")
    assert out["training_tokens"] == pytest.approx(0.3e6, rel=0.02)
    assert out["serving_usd"] == pytest.approx(5.07, abs=0.005)


# --------------------------------------------------------------------------- finetune-memory (lessons 11, 16, 17)


def test_finetune_memory_reproduces_f30_for_llama_8b():
    lora = outputs("finetune-memory")
    assert lora["trainable_params"] == 13_631_488
    assert lora["trainable_pct"] == pytest.approx(0.17, abs=0.005)
    assert lora["train_gb"] == pytest.approx(16.2, abs=0.05)
    assert lora["adapter_mb"] == pytest.approx(27, abs=0.5)
    assert outputs("finetune-memory", method="qlora")["train_gb"] == pytest.approx(4.7, abs=0.05)
    full = outputs("finetune-memory", method="full")
    assert full["train_gb"] == pytest.approx(128)
    assert full["adapter_mb"] == pytest.approx(16_000)


def test_finetune_memory_reproduces_f30_for_qwen_05b_and_llama_70b():
    qwen = dict(
        params_b=0.49,
        layers=24,
        hidden=896,
        heads=14,
        kv_heads=2,
        head_dim=64,
        mlp_hidden=4864,
        vocab=151_936,
        tied_embeddings=True,
    )
    assert outputs("finetune-memory", **qwen)["trainable_params"] == pytest.approx(2.16e6, rel=0.002)
    assert outputs("finetune-memory", **qwen)["adapter_mb"] == pytest.approx(4.3, abs=0.05)
    assert outputs("finetune-memory", **qwen, method="dora")["trainable_pct"] == pytest.approx(
        0.45, abs=0.005
    )
    llama70 = dict(
        params_b=70.6, layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, mlp_hidden=28672
    )
    out = outputs("finetune-memory", **llama70, rank=64, mlp=True)
    assert out["trainable_params"] == pytest.approx(828e6, rel=0.001)
    assert out["trainable_pct"] == pytest.approx(1.17, abs=0.005)
    assert out["train_gb"] == pytest.approx(154.5, abs=0.05)
    assert out["full_train_gb"] == pytest.approx(1130, abs=0.5)
    assert out["qlora_train_gb"] == pytest.approx(53, abs=0.5)


def test_finetune_memory_reproduces_lesson_11s_qlora_memory():
    # qlora_memory treats every target as hidden × hidden: KV heads equal to heads here.
    shape = dict(
        params_b=7.6,
        hidden=3584,
        heads=28,
        kv_heads=28,
        head_dim=128,
        mlp_hidden=18944,
        vocab=152_064,
        layers=28,
        adapted_layers=8,
        rank=8,
    )
    out = outputs("finetune-memory", **shape, method="qlora", activations_gb=2)
    assert out["trainable_params"] == 8 * 4 * 2 * 3584 * 8  # 1.84M
    assert out["train_gb"] == pytest.approx(6.3, abs=0.05)
    assert out["adapter_mb"] == pytest.approx(3.7, abs=0.05)
    assert outputs("finetune-memory", **shape, method="full")["train_gb"] == pytest.approx(121.6)


def test_dora_adds_one_magnitude_per_output_lesson_17s_formula():
    # Llama-3.1-8B with square key and value matrices (8.8B), one layer adapted.
    one_matrix = dict(params_b=8.8, adapted_layers=1, hidden=4096, heads=32, kv_heads=32, head_dim=128)
    lora = outputs("finetune-memory", **one_matrix)["trainable_params"]
    dora = outputs("finetune-memory", **one_matrix, method="dora")["trainable_params"]
    assert lora == 4 * 131_072
    assert dora == 4 * 135_168


def test_finetune_memory_refuses_a_shape_that_disagrees_with_the_parameter_count_naming_both():
    # Llama-3.1-8B's shape (8.03B) stated as a 50M model: the adapter would be 27% of it.
    with pytest.raises(ParamError) as refused:
        get("finetune-memory").run({"params_b": 0.05})
    assert refused.value.param == "params_b"
    assert "8.03B" in refused.value.message and "0.05B" in refused.value.message


@pytest.mark.parametrize(("params_b", "accepted"), [(7.4, True), (8.8, True), (7.2, False), (9.0, False)])
def test_finetune_memory_accepts_a_shape_within_10_percent(params_b, accepted):
    try:
        get("finetune-memory").run({"params_b": params_b})
    except ParamError:
        assert not accepted
    else:
        assert accepted


# --------------------------------------------------------------------------- dpo (lessons 16, 18)


def test_dpo_reproduces_lesson_18s_formula():
    out = outputs("dpo", beta=0.1, margin=1.2)
    assert out["scaled_margin"] == pytest.approx(0.12)
    assert out["loss"] == pytest.approx(0.635, abs=0.0005)
    assert out["fade"] == pytest.approx(0.47, abs=0.005)  # lesson 18's "weight σ(−0.12) = 0.47"
    assert out["loss_at_start"] == pytest.approx(0.693, abs=0.0005)


def test_dpo_gradient_weight_carries_beta_so_a_larger_beta_pulls_harder_at_lesson_18s_pair():
    # d/dθ −log σ(β·m) = −β·σ(−β·m)·dm/dθ: at margin 1.2, 0.1·σ(−0.12) and 0.5·σ(−0.6).
    assert outputs("dpo", beta=0.1, margin=1.2)["gradient_weight"] == pytest.approx(0.047, abs=0.0005)
    assert outputs("dpo", beta=0.5, margin=1.2)["gradient_weight"] == pytest.approx(0.177, abs=0.0005)


def test_dpo_margin_from_the_four_log_probabilities():
    out = outputs(
        "dpo",
        policy_chosen_logp=-10.0,
        reference_chosen_logp=-10.8,
        policy_rejected_logp=-12.4,
        reference_rejected_logp=-12.0,
    )
    assert out["margin"] == pytest.approx(1.2)
    assert out["loss"] == pytest.approx(0.635, abs=0.0005)


def test_bradley_terry_preference_lesson_16s_formula():
    assert outputs("dpo", beta=1, margin=2.5)["preference_probability"] == pytest.approx(0.924, abs=0.0005)


def test_dpo_names_the_missing_log_probability():
    with pytest.raises(ParamError) as error:
        get("dpo").run({"policy_chosen_logp": -1.0})
    assert error.value.param == "reference_chosen_logp"


def test_dpo_loss_stays_finite_for_huge_margins():
    assert math.isfinite(outputs("dpo", beta=100, margin=-1e6)["loss"])
    assert outputs("dpo", beta=100, margin=1e6)["loss"] == 0.0


def _edges() -> list[tuple[str, str, float]]:
    """Each numeric parameter at its range's ends, just inside them, and at the smallest floats."""
    cases = []
    for name, calculator in CALCULATORS.items():
        for param in calculator.params:
            if param.kind not in ("int", "float"):
                continue
            values = {v for v in (param.low, param.high) if v is not None}
            if param.low is not None:
                values.add(math.nextafter(param.low, math.inf))
            if param.high is not None:
                values.add(param.high * 0.67)
            values |= {5e-324, 1e-320}
            cases += [(name, param.name, int(v) if param.kind == "int" else v) for v in sorted(values)]
    return cases


@pytest.mark.parametrize(("name", "param", "value"), _edges())
def test_every_calculator_is_refused_or_computed_and_charted_at_its_edges(name, param, value):
    """A value the declaration accepts is computed, its chart drawn; any other is a ParamError."""
    calculator = CALCULATORS[name]
    try:
        result = calculator.run({param: value})
    except ParamError as error:
        # Its own name, or a cross-parameter rule's (efficiency_low above efficiency_high).
        assert error.param in {p.name for p in calculator.params}
        return
    for key, out in result.outputs.items():
        assert out.value is None or isinstance(out.value, str) or math.isfinite(out.value), key
        out.text()
    chart_json(name, result, [])


@pytest.mark.parametrize(
    ("name", "param", "value"),
    [("decode-ceiling", "bandwidth_gbs", 5e-324), ("decode-ceiling", "params_b", 1e-320)],
)
def test_a_divisor_below_its_positive_minimum_is_refused_by_name(name, param, value):
    with pytest.raises(ParamError) as refused:
        CALCULATORS[name].run({param: value})
    assert refused.value.param == param
    assert "at least 0." in refused.value.message


def test_a_figure_that_overflows_is_undefined_not_infinite():
    # Everything cached and an overhead of 1e-320 ms: the repeat takes 1e-320 ms, and
    # first ÷ repeat is beyond any float.
    result = CALCULATORS["prefix-cache"].run(
        {"suffix_chars": 0, "block_tokens": 1, "overhead_ms": 1e-320, "prefill_tok_s": 10_000_000}
    )
    assert result.value("speedup") is None

"""The chain from physics to money (felab_sim/engine/course/chain.py), checked by hand arithmetic.

The capstone's default: Llama-3.1-70B at FP8 on one H100 SXM (80 GiB), vLLM's 0.9 of it, 2 GB
overhead, 200 peak users, 300-token prompts and 50-token replies, an 800 ms TTFT SLO, 20%
headroom, $8 a GPU-hour for 730 hours, serverless $0.15 in / $0.60 out per 1M, 5M tickets.
Its steps are timed at the H100's calibration: nobody measured one, so the default, the H200's
achieved-to-spec ratios (felab_sim/engine/hardware/calibration.py)."""

from __future__ import annotations

import math

import pytest

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.course import chain
from felab_sim.engine.models.model_presets import BY_NAME

# Llama-3.1-70B's parameters from its config.json, counted by hand: per layer attention
# 8,192 × (8,192 + 2 × 1,024) + 8,192 × 8,192, MLP 3 × 8,192 × 28,672, two norms of 8,192;
# 80 layers, untied embeddings 2 × 128,256 × 8,192, a final norm.
LAYER = 8192 * (8192 + 2 * 1024) + 8192 * 8192 + 3 * 8192 * 28672 + 2 * 8192
EMBEDDING = 128256 * 8192
PARAMS_70B = 80 * LAYER + 2 * EMBEDDING + 8192
READ_70B = PARAMS_70B - EMBEDDING  # a decode step reads one row of the input table, not the table
USABLE = 0.9 * 80 * 2**30  # bytes
KV_PER_TOKEN = 2 * 80 * 8 * 128 * 2  # K and V, 80 layers, 8 KV heads of 128, BF16
# Achieved: the H200's read bandwidth (4,307.7 of 4,800 GB/s) and FP8 product (1,467 of 1,978.9
# TFLOP/s) as shares of the H100's spec; a matrix product's fixed cost, 321 of them a step (4 a
# layer and the head), and a small kernel's, fitted (2.2 µs), 6 a layer.
BANDWIDTH = 3350e9 * 4307.7 / 4800
FP8_PEAK = 1978.9e12 * 1467 / 1978.9
FIXED_S = (4 * 80 + 1) * (3.41996789e-05 - 2 * (4096 * 14336 + 4096 + 14336) / 4307.7e9) + 6 * 80 * 2.2e-6
ATTENTION_FLOP = 4 * 64 * 128 * 80  # a query and context token's, QKᵀ and PV, every layer
# A product of 300 rows (the prompt's): the H200's knee between its compute-bound rows 256 and
# 384 (662.26 and 673.5 TFLOP/s ÷ the 8192³ product's 797), by log M.
SHARE_256, SHARE_384 = (
    2 * 256 * 4096 * 14336 / 4.539711952209473e-05 / 797e12,
    2 * 384 * 4096 * 14336 / 6.69593620300293e-05 / 797e12,
)
SHARE_300 = SHARE_256 + (SHARE_384 - SHARE_256) * math.log(300 / 256) / math.log(384 / 256)  # 0.836
ATTENTION_RATE = 0.35 * 989.4e12  # FlashAttention-2's 35% of the BF16 peak, whatever the weights


def test_the_hand_count_is_the_preset_s():
    assert BY_NAME["Llama-3.1-70B"].shape.total_params == PARAMS_70B == 70_553_706_496


def test_the_capstone_default_step_by_step():
    walked = chain.walk({})
    assert walked.complete and [s.key for s in walked.steps] == [
        "fit", "kv_pool", "conversations", "ttft", "decode", "replicas", "dedicated", "serverless", "crossover",
    ]  # fmt: skip
    value = {step.key: step.value for step in walked.steps}
    assert value["fit"] == pytest.approx((PARAMS_70B * 1 + 2e9) / 1e9)  # 72.55 GB of 77.31
    pool = USABLE - PARAMS_70B - 2e9  # 4.756 GB
    assert value["kv_pool"] == math.floor(pool / KV_PER_TOKEN) == 14_513
    conversation = 350 * KV_PER_TOKEN
    assert value["conversations"] == math.floor(pool / conversation) == 41
    step_s = (READ_70B + 41 * (conversation + KV_PER_TOKEN)) / BANDWIDTH + FIXED_S  # memory-bound: 30.2 ms
    assert READ_70B / BANDWIDTH > 2 * READ_70B * 41 / FP8_PEAK
    prefill_s = (
        # compute-bound: the output head runs for the last token only
        max(2 * ((READ_70B - EMBEDDING) * 300 + EMBEDDING) / (FP8_PEAK * SHARE_300), READ_70B / BANDWIDTH)
        + max(300 * KV_PER_TOKEN / BANDWIDTH, ATTENTION_FLOP * 300 * 301 / 2 / ATTENTION_RATE)
        + FIXED_S
    )
    assert value["ttft"] == pytest.approx(1000 * (step_s + prefill_s), rel=1e-3)
    assert value["ttft"] == pytest.approx(65.06, abs=0.05) and value["ttft"] < 800
    assert value["decode"] == pytest.approx(1 / step_s, rel=1e-3) == pytest.approx(35.76, abs=0.01)
    assert value["replicas"] == math.ceil(200 * 1.2 / 41) == 6
    assert value["dedicated"] == pytest.approx(6 * 730 * 8) == 35_040
    per_ticket = (300 * 0.15 + 50 * 0.60) / 1e6
    assert value["serverless"] == pytest.approx(5e6 * per_ticket) == 375
    # With peak users growing with tickets, a ticket costs more on full replicas than serverless:
    # 730 h × $8 × (200 ÷ 5M × 1.2 ÷ 41) = $0.0068 against $0.000075, so no volume turns it.
    assert per_ticket < 730 * 8 * (200 / 5e6 * 1.2 / 41)
    assert value["crossover"] is None
    assert "serverless is cheaper at every volume" in walked.verdict


def test_70b_on_one_80gb_gpu_does_not_fit_at_bf16_and_the_chain_stops_there():
    walked = chain.walk({"precision": "bf16"})
    assert [step.key for step in walked.steps] == ["fit"]
    assert not walked.complete and not walked.steps[0].ok
    assert walked.steps[0].value == pytest.approx((2 * PARAMS_70B + 2e9) / 1e9)  # 143.1 GB > 77.3
    assert walked.verdict.startswith("No:")
    # What would fit, worked out: two GPUs (70.6 GB each), or FP8 on this one.
    assert "tensor_parallel 2 would" in walked.verdict and "FP8 on 1 GPU would" in walked.verdict


def test_70b_at_bf16_fits_split_over_two_gpus():
    walked = chain.walk({"precision": "bf16", "tensor_parallel": "2"})
    assert walked.complete
    # Each GPU holds half the weights and half the KV heads (4 of 8): the same per-token bytes as FP8 KV on one.
    assert walked.step("kv_pool").value == math.floor((USABLE - PARAMS_70B - 2e9) / (KV_PER_TOKEN / 2))
    assert walked.step("dedicated").value == pytest.approx(walked.step("replicas").value * 730 * 8 * 2)


def test_doubling_peak_users_doubles_the_replicas_rounded_up():
    for users in (200, 333, 1000):
        one, two = chain.walk({"peak_users": str(users)}), chain.walk({"peak_users": str(2 * users)})
        held = one.step("decode").calculator_params["batch"]
        assert one.step("replicas").value == math.ceil(round(users * 1.2 / held, 9))
        assert two.step("replicas").value == math.ceil(round(2 * users * 1.2 / held, 9))
        assert (
            one.step("replicas").value * 2 - 1 <= two.step("replicas").value <= 2 * one.step("replicas").value
        )
    assert chain.walk({"peak_users": "400"}).step("replicas").value == 2 * 6


def test_max_num_seqs_caps_a_replica_that_holds_more():
    walked = chain.walk({"model": "Llama-3.1-8B"})
    assert walked.step("conversations").value > 256
    assert walked.step("decode").calculator_params["batch"] == 256
    assert "at most 256 run (max_num_seqs)" in walked.step("ttft").formula


def test_a_tight_slo_lowers_the_users_a_replica_takes_and_an_impossible_one_stops_the_chain():
    loose = chain.walk({})
    tight = chain.walk({"slo_ms": "64.5"})  # 41 users take 65.1 ms, 1 user 63.5 ms
    users = tight.step("decode").calculator_params["batch"]
    assert 1 <= users < 41 and tight.step("ttft").value <= 64.5
    assert tight.step("replicas").value > loose.step("replicas").value
    assert tight.step("decode").value > loose.step("decode").value  # fewer users, faster each
    impossible = chain.walk({"slo_ms": "63.5"})
    assert impossible.steps[-1].key == "ttft" and not impossible.steps[-1].ok
    assert impossible.verdict.startswith("No:")


def test_a_pool_too_small_for_one_conversation_stops_at_the_conversations():
    walked = chain.walk({"prompt_tokens": "20000"})  # 20,050 tokens × 327,680 B = 6.6 GB > 4.76 GB
    assert walked.steps[-1].key == "conversations" and walked.steps[-1].value == 0
    assert not walked.complete and walked.verdict.startswith("No:")


def test_every_step_is_its_calculator_s_output_at_the_step_s_settings():
    for raw in (
        {},
        {"model": "gpt-oss-20b", "hardware": "l40s"},
        {"model": "DeepSeek-V3", "hardware": "h200", "tensor_parallel": "8"},
    ):
        for step in chain.walk(raw).steps:
            result = CALCULATORS[step.calculator].run(step.calculator_params)
            assert result.value(step.output) == step.value, (raw, step.key)


def test_custom_hardware_needs_its_three_figures_and_uses_them():
    with pytest.raises(ParamError) as error:
        chain.walk({"hardware": "custom", "memory_gb": "96"})
    assert error.value.param == "bandwidth_gbs"
    walked = chain.walk(
        {"hardware": "custom", "memory_gb": "200", "bandwidth_gbs": "1000", "peak_tflops": "500"}
    )
    assert walked.step("fit").calculator_params["memory_gb"] == 200
    assert walked.step("decode").calculator_params["bandwidth_gbs"] == 1000


def test_a_preset_without_a_published_peak_asks_for_one():
    with pytest.raises(ParamError) as error:
        chain.walk({"hardware": "dgx-spark"})
    assert error.value.param == "peak_tflops"


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ({"peak_users": "0"}, "peak_users"),
        ({"precision": "int2"}, "precision"),
        ({"tensor_parallel": "3"}, "tensor_parallel"),  # 8 KV heads do not split 3 ways
        ({"model_config": "{}"}, "model_config"),
        ({"nonsense": "1"}, "nonsense"),
    ],
)
def test_bad_settings_name_their_field(raw, param):
    with pytest.raises(ParamError) as error:
        chain.walk(raw)
    assert error.value.param == param


def test_a_pasted_config_is_walked_like_its_preset():
    import json

    config = json.dumps(dict(BY_NAME["Llama-3.1-70B"].config))
    pasted, preset = chain.walk({"model_config": config}), chain.walk({})
    assert [s.value for s in pasted.steps] == [s.value for s in preset.steps]
    assert pasted.step("kv_pool").calculator_params["model_config"] == config


def test_the_dearest_gpu_hour_on_the_widest_split_stays_within_the_sizing_calculator():
    # 64 GPUs a replica × $1,500 = $96,000 an hour: sizing takes up to $100,000 (before, $10,000 a
    # GPU-hour was accepted and the sizing step refused $640,000 a replica, blaming peak_users).
    walked = chain.walk({"tensor_parallel": "64", "gpu_hour_usd": "1500"})
    assert walked.complete and walked.step("dedicated").calculator_params["gpu_hour_usd"] == 96_000
    with pytest.raises(ParamError) as error:
        chain.walk({"gpu_hour_usd": "1501"})
    assert error.value.param == "gpu_hour_usd"


def test_a_wide_split_still_pays_each_steps_fixed_cost():
    # Llama-3.1-8B over 64 MI300X: the spec sheets' 2,614.9 TFLOP/s × 64 would prefill 300 tokens in
    # microseconds; each step still pays its 321 kernels' fixed cost (about 2.2 ms).
    walked = chain.walk({"model": "Llama-3.1-8B", "hardware": "mi300x", "tensor_parallel": "64"})
    assert walked.complete
    prefill_ms = walked.step("ttft").value - walked.step("ttft").calculator_params["overhead_ms"]
    assert prefill_ms > 321 * 6.9e-3


def test_the_crossover_works_the_replicas_out_again_at_every_volume():
    # A billion tickets for the same 200 peak users: peak users now grow 200 per 10⁹ tickets.
    raw = {"tickets_per_month": "1000000000"}
    walked = chain.walk(raw)
    per_ticket = (300 * 0.15 + 50 * 0.60) / 1e6
    crossover = walked.step("crossover").value
    replica_month = 730 * 8

    def replicas(tickets: float) -> int:  # ⌈peak users at this volume × 1.2 ÷ 41⌉, at least one
        return max(1, math.ceil(round(200 * tickets / 1e9 * 1.2 / 41, 9)))

    def dedicated_dearer(tickets: float) -> bool:
        return replicas(tickets) * replica_month > tickets * per_ticket

    # From the crossover on, dedicated is never the dearer, at any volume tried; just below, it is.
    assert crossover == pytest.approx(replica_month * replicas(crossover) / per_ticket)
    assert not any(dedicated_dearer(crossover * (1 + i / 50)) for i in range(0, 5000))
    assert dedicated_dearer(crossover * 0.999)
    # Held fixed, the replicas for 200 users (6) would have put it at $35,040 ÷ $0.000075 = 467M.
    assert crossover != pytest.approx(6 * replica_month / per_ticket)


@pytest.mark.parametrize(
    ("overhead", "blamed", "not_said"),
    [
        # 100 GB of overhead is more than the 77.3 GB usable by itself: the overhead is named.
        ("100", "the 100 GB overhead alone is more than the 77.3 GB usable", "of weights leave no room"),
        # 10 GB: neither alone, the two together; under 6.8 GB of overhead the weights would fit.
        ("10", "70.6 GB of weights and the 10 GB overhead together are more than", "alone"),
    ],
)
def test_a_fit_that_fails_names_what_exceeds(overhead, blamed, not_said):
    walked = chain.walk({"overhead_gb": overhead})
    assert walked.steps[-1].key == "fit" and not walked.complete
    assert blamed in walked.verdict and not_said not in walked.verdict
    assert "an overhead under 6.8 GB would" in walked.verdict


def test_the_weights_a_step_reads_are_told_apart_from_the_weights_held():
    # 70.55 × 10⁹ weights held (70.6 GB at FP8), a step reads all but the 1.05 × 10⁹ of the
    # input embedding table (69.5 GB): the page says which figure is which, and why they differ.
    walked = chain.walk({})
    assert f"{READ_70B / 1e9:.1f} GB weights read" == "69.5 GB weights read"
    assert "69.5 GB weights read" in walked.step("decode").formula
    assert "70.6 GB weights held" in walked.step("kv_pool").formula
    assert (
        "a step reads 69.5 GB of the 70.6 GB of weights a GPU holds: all but the input embedding table"
        in walked.step("decode").formula
    )


def test_a_ttft_whose_expected_error_reaches_100_percent_may_miss_any_slo_and_says_why():
    from felab_sim.engine.serving.validation import ExpectedError

    wide = ExpectedError(share=1.2, rows=3, kind="prefill step", models="dense models")
    step = chain.Step("ttft", "Time to first token", 50.0, "ms", "", "prefill", {}, "ttft_ms", expected=wide)
    # felab ÷ measured − 1 may reach −100%: the measured time has no upper bound.
    verdict = chain.slo_verdict(step, 10_000.0)
    assert verdict.startswith("may miss the 10,000 ms SLO") and "has no upper bound" in verdict
    assert "inf" not in verdict

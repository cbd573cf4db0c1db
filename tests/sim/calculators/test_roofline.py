"""The roofline calculator reproduces the course's worked examples. No database."""

import pytest

from tests.support.calculators import outputs


def test_roofline_ridge_points_of_h100_and_h200():
    assert outputs("roofline")["ridge_flop_per_byte"] == pytest.approx(295, abs=0.5)
    assert outputs("roofline", bandwidth_gbs=4800)["ridge_flop_per_byte"] == pytest.approx(206, abs=0.5)


def test_decode_is_memory_bound_until_the_batch_reaches_the_ridge():
    single = outputs("roofline")
    assert single["bound"] == "memory"
    assert single["attainable_tok_s"] == pytest.approx(3350 / 16)  # the decode ceiling, bf16 8B
    assert outputs("roofline", batch=296)["bound"] == "compute"


# Every sequence's KV cache is read at every step (issue 21) ------------------------------------

ISSUE_21_CASE = {"peak_tflops": 1979, "bytes_per_weight": 1, "batch": 512}  # an 8B model at FP8 on an H100


def test_weights_alone_make_batch_512_at_fp8_look_compute_bound():
    # What the roofline said before it read the KV cache, and still says at context 0.
    out = outputs("roofline", **ISSUE_21_CASE)
    assert out["bound"] == "compute"
    assert out["attainable_tok_s"] == pytest.approx(123_687.5)


def test_1000_token_contexts_make_batch_512_at_fp8_memory_bound_near_23000_tok_s():
    out = outputs("roofline", **ISSUE_21_CASE, context_tokens=1000)
    kv = 512 * 1000 * 131_072  # sequences × tokens × 2 × 32 layers × 8 KV heads × 128 × 2 B
    assert out["kv_gb_per_step"] == pytest.approx(kv / 1e9) == pytest.approx(67.1, abs=0.05)
    assert out["gb_per_step"] == pytest.approx(8 + kv / 1e9)
    assert out["bound"] == "memory"
    assert out["attainable_tok_s"] == pytest.approx(512 * 3350e9 / (8e9 + kv))
    assert 22_000 < out["attainable_tok_s"] < 24_000
    assert out["kv_share_pct"] == pytest.approx(100 * kv / (8e9 + kv))
    assert out["ridge_batch"] is None  # each sequence's KV read costs more time than its compute


def test_the_ridge_batch_moves_out_as_context_grows():
    assert outputs("roofline")["ridge_batch"] == pytest.approx(295.2, abs=0.05)
    # 2 × 8e9 / 989e12 s of compute per sequence against 100 × 131,072 B / 3,350 GB/s of KV.
    compute_s, kv_s = 2 * 8e9 / 989e12, 100 * 131_072 / 3350e9
    expected = (16e9 / 3350e9) / (compute_s - kv_s)
    assert outputs("roofline", context_tokens=100)["ridge_batch"] == pytest.approx(expected)


def test_a_batch_that_does_not_fit_says_so_and_gives_no_throughput():
    out = outputs("roofline", params_b=70, batch=1_000_000)
    assert out["fits"] == "no"
    assert out["memory_needed_gb"] == pytest.approx(70 * 2 + 2)
    assert out["attainable_tok_s"] is None and out["tok_s_per_user"] is None
    at_fp8 = outputs("roofline", params_b=70, bytes_per_weight=1, batch=1_000_000, context_tokens=1000)
    assert at_fp8["fits"] == "no"
    # (85.9 GB × 0.9 − 70 − 2) of room ÷ 1,000 tokens × 131,072 B each.
    assert at_fp8["largest_batch"] == int((85.9 * 0.9 - 70 - 2) * 1e9 // (1000 * 131_072)) == 40


def test_the_largest_batch_is_the_kv_room_over_one_sequences_kv():
    out = outputs("roofline", **ISSUE_21_CASE, context_tokens=1000)
    room = 85.9 * 0.9 - 8 - 2  # GB the engine may use, less weights and overhead
    assert out["largest_batch"] == int(room * 1e9 // (1000 * 131_072)) == 513
    assert out["fits"] == "yes"
    assert outputs("roofline", **{**ISSUE_21_CASE, "batch": 514}, context_tokens=1000)["fits"] == "no"


def test_moe_reads_only_the_active_weights_but_holds_them_all():
    out = outputs("roofline", params_b=117, active_params_b=5.1, bytes_per_weight=0.5, memory_gb=85.9)
    assert out["weights_gb_per_step"] == pytest.approx(5.1 * 0.5)
    assert out["memory_needed_gb"] == pytest.approx(117 * 0.5 + 2)


def test_a_calibration_file_puts_the_measured_figures_in_place_of_the_spec():
    measured = '{"kind": "bandwidth", "op": "read", "gbs": 4307.7}\n{"kind": "gemm", "dtype": "bf16", "tflops": 797.0}\n'
    out = outputs("roofline", bandwidth_gbs=4800, calibration=measured)
    assert out["ridge_flop_per_byte"] == pytest.approx(797e12 / 4307.7e9)
    assert out["step_ms"] == pytest.approx(
        outputs("roofline", bandwidth_gbs=4307.7, peak_tflops=797)["step_ms"]
    )
    ceiling = outputs("decode-ceiling", calibration=measured)["ceiling_tok_s"]
    assert ceiling == pytest.approx(outputs("decode-ceiling", bandwidth_gbs=4307.7)["ceiling_tok_s"])


def test_a_calibration_file_without_a_bandwidth_is_refused_naming_it():
    from felab_sim.engine.calculators import CALCULATORS
    from felab_sim.engine.core.params import ParamError

    for name in ("roofline", "decode-ceiling"):
        with pytest.raises(ParamError) as refused:
            CALCULATORS[name].run({"calibration": '{"kind": "gemm", "dtype": "bf16", "tflops": 1}'})
        assert refused.value.param == "calibration"


def test_a_batch_of_a_mixture_of_experts_reads_every_expert_its_tokens_touch():
    one = outputs("roofline", model="DeepSeek-V3", bytes_per_weight=1, batch=1)
    many = outputs("roofline", model="DeepSeek-V3", bytes_per_weight=1, batch=256)
    # one token's experts, each FP8 weight with its share of a 128 × 128 block's 4-byte scale
    assert one["weights_gb_per_step"] == pytest.approx(one["active_params_used_b"] * (1 + 4 / 128**2))
    # 256 tokens routed to 8 of 256 experts touch all but (1 − 8/256)^256 ≈ 0.03% of them.
    assert many["weights_gb_per_step"] > 0.95 * many["params_used_b"]
    assert (
        outputs("decode-ceiling", model="DeepSeek-V3", batch=256)["gb_per_token"]
        > 10 * (outputs("decode-ceiling", model="DeepSeek-V3", batch=1)["gb_per_token"])
    )

"""The decode-ceiling calculator (lessons 00, 04, 12) reproduces the course's worked examples. No database."""

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.params import ParamError
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

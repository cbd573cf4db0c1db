"""The cost calculator (lessons 06, 08, 09, 10) reproduces the course's worked examples. No database."""

import pytest

from tests.support.calculators import outputs


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

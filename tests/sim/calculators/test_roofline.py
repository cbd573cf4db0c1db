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

"""The sizing calculator (lessons 03, 15) reproduces the course's worked examples. No database."""

import pytest

from tests.support.calculators import outputs


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

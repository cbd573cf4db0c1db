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


def test_the_crossover_with_peak_users_growing_with_tickets_works_replicas_out_at_each_volume():
    # 8 users at 100M tickets, 8 a replica, no headroom: a replica per 100M tickets, $5,840 a month
    # each, $0.000075 a ticket serverless. Held at one replica the crossover is 77.9M; but at 100M
    # a second replica is due. By hand: 4 replicas ($23,360) cost what 311.47M tickets cost
    # serverless, and past 400M, 500M, ... n replicas always cost less than n × 100M tickets' $7,500.
    base = {"peak_users": 8, "capacity": 8, "headroom": 0, "tickets_per_month": 100_000_000}
    out = outputs("sizing", **base)
    assert out["crossover_tickets_month"] == pytest.approx(77.87e6, rel=0.001)
    assert out["crossover_growing_tickets_month"] == pytest.approx(4 * 5840 / 0.000075)  # 311.47M
    # 300M + 1 takes a 4th replica ($23,360) against $22,500 serverless: still dedicated-dearer.
    assert 4 * 5840 > (300e6 + 1) * 0.000075
    # When a full replica's ticket costs more than serverless's, no volume turns it: none.
    assert outputs("sizing")["crossover_growing_tickets_month"] is None
    assert outputs("sizing", **{**base, "tickets_per_month": 0})["crossover_growing_tickets_month"] is None

"""Live numbers cited from card text: names, checks and values. No database."""

import pytest

from felab_sim.engine.course import live_numbers
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import SweepParams

DEFAULT = run_sweep(SweepParams())


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("c1.agg_tok_s", "54.2"),
        ("c8.agg_tok_s", "276.3"),
        ("c1.user_tok_s", "54.9"),
        ("c8.user_tok_s", "38.8"),
        ("c8.requests", "24"),
        ("c8.goodput_rps", "2.5"),
        ("capacity", "8"),
        ("slots", "8"),
        ("slo_ms", "500"),
        ("growth_pct", "6"),
        ("step_ms.c1", "18"),
        ("step_ms.c8", "25.6"),
        ("ideal_user_tok_s.c1", "55.6"),
        ("ideal_user_tok_s.c8", "39.1"),
        ("speedup.c8", "5.1"),
        ("keeps_pct.c8", "70.7"),
        ("slower_pct.c8", "29.3"),
        ("replicas.u120", "15"),
        ("replicas_headroom.u120", "18"),
    ],
)
def test_seed_card_live_numbers_print_by_the_sites_one_rule(name, text):
    assert live_numbers.text_of(name, DEFAULT) == text


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("c9.agg_tok_s", "level 9 is not in the scenario's levels"),
        ("c8.tokens_per_second", "not a sweep metric"),
        ("nonsense", "not a known live number"),
        ("speedup.u8", "not a known live number"),
        ("step_ms.c5000", "level must be from 1 to 1024"),
        ("replicas.u0", "users must be from 1"),
        ("", "not a known live number"),
    ],
)
def test_unknown_names_are_refused_with_a_reason(name, reason):
    with pytest.raises(live_numbers.UnknownLiveNumber, match=reason):
        live_numbers.parse(name, SweepParams())


def test_ratios_need_level_one():
    with pytest.raises(live_numbers.UnknownLiveNumber, match="needs level 1"):
        live_numbers.parse("speedup.c8", SweepParams(levels=(2, 8)))


def test_problems_lists_each_bad_name_once_and_requires_a_scenario():
    text = "{{sim.c8.agg_tok_s}} {{ sim.bogus }} {{sim.bogus}}"
    assert live_numbers.problems([text], SweepParams()) == [
        "sim.bogus: not a known live number; see felab_sim/engine/course/live_numbers.py for the list"
    ]
    assert live_numbers.problems(["{{sim.capacity}}"], None) == [
        "sim.capacity: this card cites live numbers, so it needs a scenario"
    ]
    assert live_numbers.problems(["no live numbers here, {{ other }}"], None) == []


def test_an_unknown_name_without_a_scenario_is_named_as_unknown():
    assert live_numbers.problems(["{{sim.bogus}}"], None) == [
        "sim.bogus: not a known live number; see felab_sim/engine/course/live_numbers.py for the list"
    ]
    assert live_numbers.problems(["{{sim.c8.speed}} and {{sim.c8.agg_tok_s}}"], None) == [
        "sim.c8.speed: 'speed' is not a sweep metric; use one of "
        "agg_tok_s, user_tok_s, ttft_p50_ms, ttft_p95_ms, goodput_rps, requests",
        "sim.c8.agg_tok_s: this card cites live numbers, so it needs a scenario",
    ]


def test_fill_never_raises_and_dashes_what_it_cannot_resolve():
    text = "total {{sim.c8.agg_tok_s}}, bad {{sim.c3.agg_tok_s}}, none {{sim.nope}}"
    assert live_numbers.fill(text, DEFAULT) == "total 276.3, bad —, none —"
    assert live_numbers.fill(text, None) == "total —, bad —, none —"


def test_capacity_numbers_dash_when_no_level_meets_the_slo():
    tight = run_sweep(SweepParams(levels=(1, 8), slo_ms=1))
    assert tight.capacity is None
    assert live_numbers.text_of("capacity", tight) == live_numbers.MISSING
    assert live_numbers.text_of("replicas.u120", tight) == live_numbers.MISSING


def test_fill_wraps_values_when_asked():
    wrapped = live_numbers.fill("{{sim.capacity}}", DEFAULT, lambda name, value: f"[{name}={value}]")
    assert wrapped == "[capacity=8]"

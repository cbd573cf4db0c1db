"""felab_sim.engine's sweep: the server's rules, prompts, prefix cache, simulator, metrics, web caps. No DB."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.sweep.limits import WEB_LIMITS, check_web_limits
from felab_sim.engine.sweep.metrics import (
    LevelResult,
    RequestTiming,
    SweepResult,
    capacity,
    level_metrics,
    nearest_rank,
)
from felab_sim.engine.sweep.prefix_cache import PrefixCache
from felab_sim.engine.sweep.prompts import output_tokens, prompt_tokens, requests_at_level, sweep_prompt
from felab_sim.engine.sweep.simulator import run_sweep, simulate_level
from felab_sim.engine.sweep.sweep_params import MAX_LEVEL, ServerParams, SweepParams, step_ms_at

# The course's published table (docs/architecture.md): C -> (agg_tok_s, user_tok_s, p50, p95, goodput).
COURSE = {
    1: (54.1, 54.9, 25.4, 27.4, 0.5),
    8: (275.1, 38.9, 26.3, 41.4, 2.5),
    16: (294.3, 38.9, 2776.3, 3357.0, 0.4),
}
IDEAL = SweepParams(request_overhead_ms=0.0, token_overhead_ms=0.0)


@pytest.fixture(scope="module")
def default_sweep() -> SweepResult:
    return run_sweep()


def level(result: SweepResult, conc: int) -> LevelResult:
    return next(lv for lv in result.levels if lv.conc == conc)


# --------------------------------------------------------------------------- the course's table


@pytest.mark.parametrize("conc", sorted(COURSE))
def test_default_sweep_reproduces_course_table(default_sweep, conc):
    agg, user, p50, _p95, _goodput = COURSE[conc]
    got = level(default_sweep, conc)
    assert got.agg_tok_s == pytest.approx(agg, rel=0.01)
    assert got.user_tok_s == pytest.approx(user, rel=0.01)
    assert got.ttft_p50_ms == pytest.approx(p50, rel=0.05)


@pytest.mark.parametrize("conc", sorted(COURSE))
def test_default_goodput_rounds_like_the_course(default_sweep, conc):
    assert round(level(default_sweep, conc).goodput_rps, 1) == COURSE[conc][4]


def test_default_p95_under_slo_to_c8_and_far_over_at_c16(default_sweep):
    # The course's 41.4 ms at C = 8 is run-to-run noise the rules do not produce (no request
    # queues at C <= slots); what matters for capacity is the side of the SLO.
    assert level(default_sweep, 8).ttft_p95_ms < 50
    assert level(default_sweep, 16).ttft_p95_ms == pytest.approx(3357.0, rel=0.05)


def test_default_capacity_is_8(default_sweep):
    assert default_sweep.capacity == 8
    assert default_sweep.params.slo_ms == 500


def test_ideal_server_per_user_speed():
    result = run_sweep(IDEAL)
    assert round(level(result, 1).user_tok_s, 1) == 55.6  # 1000 / 18
    assert round(level(result, 8).user_tok_s, 1) == 39.1  # 1000 / 25.56


def test_ideal_server_gaps_are_exactly_one_step_at_c1():
    _, timings = simulate_level(IDEAL, 1)
    for timing in timings:
        gaps = [b - a for a, b in zip(timing.chunk_times, timing.chunk_times[1:], strict=False)]
        assert all(g == pytest.approx(0.018) for g in gaps)


def test_ideal_ttft_is_prefill_alone_at_c1():
    _, timings = simulate_level(IDEAL, 1)
    for i, timing in enumerate(timings):
        prefill = IDEAL.server.prefill_ms(prompt_tokens(sweep_prompt(i)))
        assert (timing.chunk_times[0] - timing.sent) * 1000 == pytest.approx(prefill)


def test_step_and_prefill_rules():
    server = ServerParams()
    assert server.decode_step_ms(1) == 18.0
    assert server.decode_step_ms(8) == pytest.approx(25.56)
    assert step_ms_at(SweepParams(), 8) == step_ms_at(server, 8) == server.decode_step_ms(8)
    assert server.prefill_ms(16) == pytest.approx(15 + 6.4)
    assert server.prefill_ms(0) == 15.0


# --------------------------------------------------------------------------- JSON shape


def test_sweep_as_dict_matches_the_interface(default_sweep):
    data = default_sweep.as_dict()
    assert list(data) == ["params", "levels", "slo_ms", "capacity"]
    assert data["capacity"] == 8
    assert data["slo_ms"] == 500
    assert data["params"]["levels"] == [1, 2, 4, 8, 16, 32]
    first = data["levels"][0]
    assert list(first) == [
        "conc",
        "requests",
        "agg_tok_s",
        "user_tok_s",
        "ttft_p50_ms",
        "ttft_p95_ms",
        "goodput_rps",
    ]
    assert first["conc"] == 1 and first["requests"] == 12
    assert first["agg_tok_s"] == round(level(default_sweep, 1).agg_tok_s, 1)
    assert [lv["requests"] for lv in data["levels"]] == [12, 12, 12, 24, 48, 96]
    json.dumps(data, allow_nan=False)


def test_flat_round_trip():
    params = SweepParams(
        levels=(3, 1),
        max_tokens=64,
        slo_ms=250,
        request_overhead_ms=1,
        token_overhead_ms=0,
        server=ServerParams(slots=4, step_ms=10, growth=0.1, prefill_tok_s=1000),
    )
    flat = params.as_flat()
    json.dumps(flat, allow_nan=False)
    assert flat["levels"] == [1, 3]
    assert SweepParams.from_flat(flat) == params
    as_strings = {k: str(v) for k, v in flat.items() if k != "levels"}
    assert SweepParams.from_flat({**as_strings, "levels": "3,1"}) == params


def test_from_flat_defaults_and_strings():
    assert SweepParams.from_flat({}) == SweepParams()
    params = SweepParams.from_flat(
        {"levels": " 16, 1,8 ,8", "slots": "4", "step_ms": "20.5", "growth": "0", "slo_ms": "1e3"}
    )
    assert params.levels == (1, 8, 16)
    assert params.server == ServerParams(slots=4, step_ms=20.5, growth=0.0)
    assert params.slo_ms == 1000.0
    assert SweepParams.from_flat({"levels": [2, "1"]}).levels == (1, 2)
    assert SweepParams.from_flat({"levels": 4}).levels == (4,)


# --------------------------------------------------------------------------- validation

BAD_NUMBERS = ["-1", "nan", "NaN", "inf", "-inf", "abc", "", "   ", True, None, [1], "1" * 300]
HUGE = "1e400"  # parses to inf

RANGES = {
    # param: (values invalid besides BAD_NUMBERS)
    "slots": [0, "0", 1025, "1e3", "8.5", 8.5, 10**30],
    "step_ms": [0, "0", 10_000.001, "1e9", HUGE],
    "growth": [-0.01, 1.01, "2", HUGE],
    "prefill_tok_s": [0, "0", 0.5, 10_000_001, HUGE],
    "max_tokens": [0, "0", 4097, "12.0", 1.5],
    "slo_ms": [0, "0", 600_001, HUGE],
    "request_overhead_ms": [-0.1, 1000.5, HUGE],
    "token_overhead_ms": [-0.1, 1001, HUGE],
}


def test_a_whole_float_is_an_integer_as_for_the_calculators():
    # JSON has one number type: the declarations read 8.0 as the integer 8 for every parameter.
    params = SweepParams.from_flat({"slots": 8.0, "max_tokens": 64.0})
    assert params.server.slots == 8 and isinstance(params.server.slots, int)
    assert params.max_tokens == 64 and isinstance(params.max_tokens, int)


@pytest.mark.parametrize(
    ("param", "value"),
    [(p, v) for p, extra in RANGES.items() for v in [*BAD_NUMBERS, *extra]],
)
def test_from_flat_rejects_bad_values_naming_the_param(param, value):
    with pytest.raises(ParamError) as info:
        SweepParams.from_flat({param: value})
    assert info.value.param == param
    assert param in str(info.value)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        [],
        "0",
        "1,0",
        "-1",
        str(MAX_LEVEL + 1),
        "1,,2",
        "1,",
        "a",
        "1.5",
        "nan",
        "inf",
        True,
        [True],
        [1.0],
        None,
        ",".join(str(i) for i in range(1, 14)),  # 13 levels
        "1" * 300,
        {"1": 1},
        "٣",  # a digit, but not ASCII
    ],
)
def test_bad_levels(value):
    with pytest.raises(ParamError) as info:
        SweepParams.from_flat({"levels": value})
    assert info.value.param == "levels"
    assert "levels" in str(info.value) and "1 to 12" in str(info.value)


def test_unknown_param():
    with pytest.raises(ParamError) as info:
        SweepParams.from_flat({"level": "1,2"})
    assert info.value.param == "level"
    assert "level" in str(info.value) and "levels" in str(info.value)


def test_message_states_the_range():
    with pytest.raises(ParamError, match=r"step_ms must be a number greater than 0 and at most"):
        SweepParams.from_flat({"step_ms": "0"})
    with pytest.raises(ParamError, match=r"slots must be an integer at least 1 and at most 1,024"):
        ServerParams(slots=0)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"slots": True}, "slots"),
        ({"slots": "8"}, "slots"),
        ({"step_ms": math.nan}, "step_ms"),
        ({"step_ms": -1}, "step_ms"),
        ({"growth": math.inf}, "growth"),
        ({"growth": False}, "growth"),
        ({"prefill_tok_s": 0}, "prefill_tok_s"),
    ],
)
def test_server_params_validate_directly(kwargs, param):
    with pytest.raises(ParamError) as info:
        ServerParams(**kwargs)
    assert info.value.param == param


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"levels": ()}, "levels"),
        ({"levels": tuple(range(1, 14))}, "levels"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"slo_ms": math.nan}, "slo_ms"),
        ({"request_overhead_ms": math.inf}, "request_overhead_ms"),
        ({"token_overhead_ms": "0.2"}, "token_overhead_ms"),
        ({"server": {"slots": 8}}, "server"),
    ],
)
def test_sweep_params_validate_directly(kwargs, param):
    with pytest.raises(ParamError) as info:
        SweepParams(**kwargs)
    assert info.value.param == param


def test_param_error_is_a_value_error():
    assert issubclass(ParamError, ValueError)


# --------------------------------------------------------------------------- web caps


def test_web_limits_accept_the_default_sweep():
    check_web_limits(SweepParams())
    check_web_limits(SweepParams(levels=tuple(range(50, 62)), max_tokens=4096))


def test_web_limits_reject_a_huge_sweep_stating_the_cap():
    params = SweepParams(levels=tuple(range(1013, 1025)), max_tokens=200)
    with pytest.raises(ParamError) as info:
        check_web_limits(params)
    assert info.value.param == "levels"
    assert f"the web cap is {WEB_LIMITS.max_work:,}" in str(info.value)


def test_many_requests_of_few_tokens_on_a_big_heap_are_refused():
    # Under 400,000 tokens, but 35,907 requests on a heap of 1,024: 0.3-0.6 s to simulate.
    params = SweepParams(levels=(1024, *range(990, 1001)), max_tokens=11, server=ServerParams(slots=1024))
    with pytest.raises(ParamError, match="would simulate 466,791 events"):
        check_web_limits(params)


@pytest.mark.parametrize(
    ("levels", "slots", "max_tokens"), [((1, 8), 8, 128), ((1024,), 8, 11), ((64, 300), 1024, 4096)]
)
def test_the_web_limit_counts_the_events_the_simulation_processes(levels, slots, max_tokens):
    params = SweepParams(levels=levels, max_tokens=max_tokens, server=ServerParams(slots=slots))
    processed = 0
    for conc in levels:
        _, timings = simulate_level(params, conc)
        processed += sum(len(timing.chunk_times) + 2 for timing in timings)  # arrival, tokens, release
    assert WEB_LIMITS.events(params) == processed


def test_the_same_events_cost_more_on_a_bigger_heap():
    narrow = SweepParams(levels=(1024,), server=ServerParams(slots=8))
    wide = SweepParams(levels=(1024,), server=ServerParams(slots=1024))
    assert WEB_LIMITS.events(narrow) == WEB_LIMITS.events(wide)
    assert WEB_LIMITS.work(wide) > 1.5 * WEB_LIMITS.work(narrow)


# --------------------------------------------------------------------------- prompts and cache


def test_prompt_text_and_tokens():
    assert sweep_prompt(0) == "#0 Summarise the idea of caching for a new engineer in 80 words."
    assert sweep_prompt(15) == "#15 Summarise the idea of MoE for a new engineer in 80 words."
    assert sweep_prompt(13).count("GPUs") == 1
    assert prompt_tokens("") == 1
    assert prompt_tokens("abc") == 1
    assert prompt_tokens("a" * 9) == 2
    assert len({sweep_prompt(i) for i in range(96)}) == 96


def test_output_tokens_rule():
    text = sweep_prompt(3)
    draw = random.Random(text).randint(60, 200)
    assert output_tokens(text, 4096) == draw
    assert output_tokens(text, 10) == 10
    assert all(60 <= output_tokens(sweep_prompt(i), 4096) <= 200 for i in range(200))


def test_prefix_cache_whole_blocks_only():
    cache = PrefixCache()
    long = "x" * 600  # 150 tokens: two whole blocks and a 22-token tail
    assert cache.uncached_tokens(long) == 150
    assert cache.uncached_tokens(long) == 150 - 128
    # Same first block, different second: only the first is free.
    other = "x" * 256 + "y" * 344
    assert cache.uncached_tokens(other) == 150 - 64
    # A block is free only if everything before its end was seen: same second block text,
    # different first block.
    assert cache.uncached_tokens("z" * 256 + "x" * 344) == 150
    # Short prompts never have a whole block.
    assert cache.uncached_tokens("short") == 1
    assert cache.uncached_tokens("short") == 1
    # A prompt ending exactly on a block boundary can be wholly cached.
    assert cache.uncached_tokens("x" * 512) == 0


def test_prefix_cache_is_bounded():
    cache = PrefixCache(max_blocks=3)
    for i in range(10):
        cache.uncached_tokens(f"{i:03d}" + "a" * 1000)
    assert len(cache) == 3


def test_prefix_cache_handles_lone_surrogates():
    assert PrefixCache().uncached_tokens("\ud800" * 300) == 75


# --------------------------------------------------------------------------- metrics


def test_nearest_rank():
    values = list(range(1, 21))
    assert nearest_rank(values, 95) == 19
    assert nearest_rank(values, 50) == 10
    assert nearest_rank(values, 100) == 20
    assert nearest_rank(reversed(values), 1) == 1
    assert nearest_rank(list(range(12)), 50) == 5
    assert nearest_rank(list(range(12)), 95) == 11
    assert nearest_rank([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        nearest_rank([], 50)
    with pytest.raises(ValueError):
        nearest_rank([1], 0)


def test_level_metrics_by_hand():
    timings = [
        RequestTiming(0.0, (0.1, 0.2, 0.3)),  # TTFT 100 ms, gaps 100 ms -> 10 tok/s
        RequestTiming(0.0, (0.6, 0.65, 0.7, 0.75, 1.0)),  # 600 ms; gaps 50,50,50,250 -> 20 tok/s
        RequestTiming(0.5, (0.75,)),  # 250 ms, no gap
        RequestTiming(0.9, ()),  # failed: no TTFT, not good
    ]
    got = level_metrics(2, timings, wall_s=2.0, slo_ms=300)
    assert got.requests == 4
    assert got.tokens == 9
    assert got.agg_tok_s == pytest.approx(4.5)
    assert got.user_tok_s == pytest.approx(15.0)
    assert got.ttft_p50_ms == pytest.approx(250.0)
    assert got.ttft_p95_ms == pytest.approx(600.0)
    assert got.goodput_rps == pytest.approx(1.0)  # 100 and 250 ms are within 300 ms
    assert got.wall_s == 2.0


def test_level_metrics_without_gaps_or_chunks():
    single = level_metrics(1, [RequestTiming(0.0, (0.1,))], 1.0, 500)
    assert single.user_tok_s is None and single.ttft_p50_ms == pytest.approx(100)
    empty = level_metrics(1, [RequestTiming(0.0, ())], 1.0, 500)
    assert empty.ttft_p95_ms is None and empty.agg_tok_s == 0 and empty.goodput_rps == 0
    assert empty.as_dict()["ttft_p95_ms"] is None
    with pytest.raises(ValueError):
        level_metrics(1, [], 0.0, 500)


def test_capacity():
    def lv(conc, p95):
        return LevelResult(conc, 12, 1.0, 1.0, p95, p95, 1.0, 12, 1.0)

    assert capacity([lv(1, 30), lv(8, 499.9), lv(16, 3000)], 500) == 8
    assert capacity([lv(1, 600)], 500) is None
    assert capacity([lv(1, None)], 500) is None
    assert capacity([], 500) is None


def test_as_dict_rounding():
    got = LevelResult(8, 24, 276.349, 38.8249, 25.649, 26.05, 2.5349, 2600, 9.4).as_dict()
    assert got == {
        "conc": 8,
        "requests": 24,
        "agg_tok_s": 276.3,
        "user_tok_s": 38.8,
        "ttft_p50_ms": 25.6,
        "ttft_p95_ms": 26.1,
        "goodput_rps": 2.53,
    }


def test_max_tokens_one_has_no_user_speed():
    result = run_sweep(SweepParams(levels=(1, 4), max_tokens=1))
    assert all(lv.user_tok_s is None and lv.tokens == lv.requests for lv in result.levels)
    json.dumps(result.as_dict(), allow_nan=False)


def test_run_sweep_is_deterministic():
    assert run_sweep() == run_sweep()
    assert run_sweep(IDEAL).as_dict() == run_sweep(IDEAL).as_dict()


def test_levels_are_independent_fresh_servers():
    alone = run_sweep(SweepParams(levels=(8,))).levels[0]
    assert alone == level(run_sweep(), 8)


# --------------------------------------------------------------------------- properties

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def servers(draw, max_slots: int = 8, min_step: float = 1e-3, **bounds) -> ServerParams:
    return ServerParams(
        slots=draw(st.integers(1, max_slots)),
        step_ms=draw(st.floats(min_step, bounds.get("max_step", 10_000.0))),
        growth=draw(st.floats(0.0, bounds.get("max_growth", 1.0))),
        prefill_tok_s=draw(st.floats(bounds.get("min_rate", 1.0), 10_000_000.0)),
    )


@st.composite
def sweeps(draw, min_max_tokens: int = 1, **bounds) -> SweepParams:
    server = draw(servers(**bounds))
    return SweepParams(
        levels=draw(st.lists(st.integers(1, 24), min_size=1, max_size=4)),
        max_tokens=draw(st.integers(min_max_tokens, 4096)),
        slo_ms=draw(st.floats(1e-3, 600_000.0)),
        request_overhead_ms=draw(st.floats(0.0, 1000.0)),
        token_overhead_ms=draw(st.floats(0.0, 1000.0)),
        server=server,
    )


@FAST
@given(params=sweeps(), conc=st.integers(1, 24))
def test_every_token_is_counted_once(params, conc):
    result, timings = simulate_level(params, conc)
    assert len(timings) == result.requests == requests_at_level(conc)
    expected = [output_tokens(sweep_prompt(i), params.max_tokens) for i in range(len(timings))]
    assert [len(t.chunk_times) for t in timings] == expected
    assert result.tokens == sum(expected)
    for t in timings:
        assert t.sent <= t.chunk_times[0]
        assert all(a < b for a, b in zip(t.chunk_times, t.chunk_times[1:], strict=False))
        assert t.chunk_times[-1] <= result.wall_s
    assert json.dumps(result.as_dict(), allow_nan=False)


@FAST
@given(params=sweeps(max_growth=0.49).filter(lambda p: p.server.slots >= 2))
def test_batching_pays_when_growth_is_under_half(params):
    # With growth g < 1 a step serving S users costs less than S solo steps, so S streams
    # outrun one. growth < 0.5 leaves margin for the per-level differences (which prompts,
    # the draining tail).
    slots = params.server.slots
    one, _ = simulate_level(params, 1)
    full, _ = simulate_level(params, slots)
    assert full.agg_tok_s > one.agg_tok_s


@st.composite
def busy_sweeps(draw) -> SweepParams:
    """Sweeps whose time outside the server is small beside a step: the client's round trip
    (request_overhead_ms) at most one step, the per-token overhead at most a tenth of one.

    Outside that, the rule "user speed never rises with C" can genuinely fail: when requests
    spend as long in transit as in the server, how full the server runs depends on C modulo
    slots, and the median request can land on a less crowded step (e.g. slots 9, 3 tokens,
    request overhead 5 steps: C = 13 is 2.6% faster per user than C = 11).
    """
    # Steps of at least 0.1 ms keep float noise (an ulp of a time of ~1e3 s, over a gap)
    # far below the tolerance below.
    server = draw(servers(max_slots=16, min_step=0.1, max_step=1000.0))
    step = server.step_ms
    return SweepParams(
        levels=draw(st.lists(st.integers(1, 40), min_size=2, max_size=5)),
        max_tokens=draw(st.integers(1, 4096)),
        request_overhead_ms=draw(st.floats(0.0, step)),
        token_overhead_ms=draw(st.floats(0.0, step / 10)),
        server=server,
    )


@FAST
@given(params=busy_sweeps())
def test_user_speed_never_rises_with_concurrency(params):
    speeds = [lv.user_tok_s for lv in run_sweep(params).levels]
    if params.max_tokens == 1:
        assert speeds == [None] * len(speeds)
        return
    for slower, faster in zip(speeds[1:], speeds, strict=False):
        assert slower <= faster * (1 + 1e-7)


@FAST
@given(
    server=servers(min_step=5.0, max_step=1000.0, min_rate=500.0),
    max_tokens=st.integers(60, 4096),
    request_overhead_ms=st.floats(0.0, 20.0),
    token_overhead_ms=st.floats(0.0, 2.0),
)
def test_ttft_explodes_past_the_slots(server, max_tokens, request_overhead_ms, token_overhead_ms):
    # At C = slots no request ever queues (the client sends the next request when a slot
    # frees), so TTFT is request overhead + prefill + one token overhead: at most
    # 20 + (15 + 17 tokens / 500 tok/s) + 2 = 71 ms here. At C = 2 * slots half the requests in
    # flight wait for a slot, i.e. for a request ahead to stream all of its >= 60 tokens
    # (>= 60 steps of >= 5 ms = 300 ms), so the p95 request's TTFT is over 4x larger
    # (random search over these bounds: at least 6.7x).
    params = SweepParams(
        max_tokens=max_tokens,
        request_overhead_ms=request_overhead_ms,
        token_overhead_ms=token_overhead_ms,
        server=server,
    )
    at_slots, _ = simulate_level(params, server.slots)
    past, _ = simulate_level(params, 2 * server.slots)
    assert past.ttft_p95_ms >= 3 * at_slots.ttft_p95_ms


@FAST
@given(params=sweeps())
def test_from_flat_inverts_as_flat(params):
    assert SweepParams.from_flat(params.as_flat()) == params
    assert SweepParams.from_flat(json.loads(json.dumps(params.as_flat()))) == params


@FAST
@given(params=sweeps())
def test_valid_sweeps_are_deterministic_and_json_ready(params):
    first = run_sweep(params)
    assert first == run_sweep(params)
    data = json.loads(json.dumps(first.as_dict(), allow_nan=False))
    assert [lv["conc"] for lv in data["levels"]] == list(params.levels)
    assert first.capacity == capacity(first.levels, params.slo_ms)

"""Lesson 06's prefix-cache run over HTTP (felab_sim.engine.sweep.prefix_cache_run) and its command, `prefix_cache`."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.sweep.loadgen import LoadgenError
from felab_sim.engine.sweep.prefix_cache import PrefixCache
from felab_sim.engine.sweep.prefix_cache_run import PREFIX_ORDERS, PrefixCacheSetup, run_prefix_cache
from felab_sim.engine.sweep.prompts import BLOCK_CHARS, BLOCK_TOKENS, prompt_tokens
from felab_sim.engine.sweep.sweep_params import ServerParams

from .conftest import serving

# 4,000 shared characters: 1,020 tokens cold (423 ms of prefill at 2,500 tok/s), 60 warm (39 ms).
SETUP = PrefixCacheSetup(prefix_chars=4_000, suffix_chars=80, requests=4, max_tokens=2)


def test_shared_first_reuses_every_whole_block_of_the_shared_part(server):
    run = run_prefix_cache(server.api, SETUP)
    cached = [r.cached_tokens for r in run.requests]
    assert cached == [0] + [4_000 // BLOCK_CHARS * BLOCK_TOKENS] * 3
    assert run.prompt_tokens == prompt_tokens("x" * 4_080) == 1_020
    assert run.cached_tokens == 960
    # The server cannot beat its own rules; the margin above them is the machine's.
    params = ServerParams()
    assert run.ttft_cold_ms >= params.prefill_ms(1_020) - 1
    assert run.ttft_warm_ms >= params.prefill_ms(60) - 1
    assert run.speedup > 3  # 10.8 by the rules


def test_variable_first_reuses_nothing(server):
    run = run_prefix_cache(server.api, PrefixCacheSetup(**{**SETUP.__dict__, "order": "variable-first"}))
    assert [r.cached_tokens for r in run.requests] == [0, 0, 0, 0]
    assert min(r.ttft_ms for r in run.requests) >= ServerParams().prefill_ms(1_020) - 1


@pytest.mark.parametrize("order", PREFIX_ORDERS)
def test_a_measured_run_agrees_with_the_prefix_cache_calculator(server, order):
    """The same parameters through the calculator and against the server: the cache's numbers
    are exactly the calculator's, and no TTFT beats it (the server's decode step is short here;
    prefill follows the default rules the calculator uses)."""
    setup = PrefixCacheSetup(**{**SETUP.__dict__, "order": order})
    run = run_prefix_cache(server.api, setup)
    model = CALCULATORS["prefix-cache"].run(
        {"prefix_chars": setup.prefix_chars, "suffix_chars": setup.suffix_chars, "order": order}
    )
    measured = run.as_dict()
    for key in ("prompt_tokens", "cached_tokens", "uncached_tokens"):
        assert measured[key] == model.value(key), key
    assert run.ttft_cold_ms >= model.value("ttft_cold_ms") - 1
    assert run.ttft_warm_ms >= model.value("ttft_warm_ms") - 1


def test_the_prompts_are_the_layouts_the_lesson_compares():
    shared_first = SETUP.prompts("run-a")
    variable_first = PrefixCacheSetup(**{**SETUP.__dict__, "order": "variable-first"}).prompts("run-a")
    assert all(len(p) == 4_080 for p in shared_first + variable_first)
    assert len({p[:4_000] for p in shared_first}) == 1  # one shared part ...
    assert len({p[4_000:] for p in shared_first}) == 4  # ... then a different question each
    assert len({p[0] for p in variable_first}) == 4  # variable first: different from the first character
    assert {p[80:] for p in variable_first} == {shared_first[0][:4_000]}
    # The model's own cache agrees: each run starts cold, even after another run.
    cache = PrefixCache()
    for prompt in shared_first:
        cache.uncached_tokens(prompt)
    assert cache.uncached_tokens(SETUP.prompts("run-b")[0]) == 1_020


def test_a_server_that_reports_no_usage_leaves_cached_tokens_unknown():
    async def no_usage(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        if scope["path"].endswith("/models"):
            body, kind = b'{"object": "list", "data": [{"id": "m"}]}', b"application/json"
        else:
            body = b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\ndata: [DONE]\n\n'
            kind = b"text/event-stream"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": body})

    with serving(ServerParams(), app=no_usage) as other:
        run = run_prefix_cache(other.api, SETUP)
    assert run.cached_tokens is None
    assert run.as_dict()["uncached_tokens"] is None
    assert run.ttft_cold_ms > 0


def test_a_missing_server_is_a_clear_error():
    with pytest.raises(LoadgenError, match="cannot connect"):
        run_prefix_cache("http://127.0.0.1:9/v1", SETUP)


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"prefix_chars": -1}, "prefix_chars"),
        ({"suffix_chars": 10**7}, "suffix_chars"),
        ({"prefix_chars": 0, "suffix_chars": 0}, "prefix_chars"),
        ({"requests": 1}, "requests"),  # no warm request to compare with
        ({"max_tokens": 0}, "max_tokens"),
        ({"order": "random"}, "order"),
        ({"requests": True}, "requests"),
    ],
)
def test_bad_setups_name_their_parameter(change, param):
    with pytest.raises(ParamError) as error:
        PrefixCacheSetup(**{**SETUP.__dict__, **change})
    assert error.value.param == param


def test_the_command_measures_both_orders(server, capsys):
    call_command(
        "prefix_cache",
        "--url",
        server.api,
        "--prefix-chars",
        "2048",
        "--requests",
        "3",
        "--max-tokens",
        "1",
        "--json",
    )
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [run["params"]["order"] for run in runs] == ["shared-first", "variable-first"]
    assert [run["cached_tokens"] for run in runs] == [512, 0]
    assert [len(run["requests"]) for run in runs] == [3, 3]


def test_the_command_prints_a_table(server, capsys):
    call_command(
        "prefix_cache", "--url", server.api, "--order", "shared-first", "--requests", "2", "--max-tokens", "1"
    )
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "order",
        "prompt_tokens",
        "cached_tokens",
        "ttft_cold_ms",
        "ttft_warm_ms",
        "speedup",
    ]
    assert out.splitlines()[1].split()[:3] == ["shared-first", "3050", "3008"]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--prefix-chars", "-5"], "--prefix-chars"),
        (["--requests", "1"], "--requests"),
        (["--max-tokens", "100000"], "--max-tokens"),
    ],
)
def test_the_command_names_a_bad_flag(flags, named):
    with pytest.raises(CommandError, match=f"^{named}"):
        call_command("prefix_cache", "--url", "http://127.0.0.1:9/v1", *flags)


def test_the_command_reports_an_unreachable_server():
    with pytest.raises(CommandError, match=r"^--url http://127.0.0.1:9/v1: .*cannot connect"):
        call_command("prefix_cache", "--url", "http://127.0.0.1:9/v1", "--requests", "2")

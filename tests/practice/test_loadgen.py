"""The real sweep over HTTP: same metrics and JSON as the simulator, and clear errors."""

from __future__ import annotations

import asyncio
import socket
import warnings

import pytest

from felab_sim.engine.sweep.loadgen import LoadgenError, measure_sweep, run_real_sweep
from felab_sim.engine.sweep.metrics import SweepResult
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import ServerParams, SweepParams

from .conftest import serving

# C = 4 on 2 slots, so the short sweep also exercises the queue. 5 ms steps and 16-token
# replies keep it to about 2 s.
SHORT_SERVER = ServerParams(slots=2, step_ms=5.0)
SHORT_SWEEP = SweepParams(
    levels=(1, 4), max_tokens=16, request_overhead_ms=0.0, token_overhead_ms=0.0, server=SHORT_SERVER
)


@pytest.fixture(scope="module")
def short_server():
    with serving(SHORT_SERVER) as running:
        yield running


# A sweep whose server fell behind by this much in all (a few steps, against a level's ~0.7 s) is
# still judged on both sides: the tolerances below absorb it.
STALLS_JUDGED_THROUGH_S = 0.02


def faster_than_the_model(measured: SweepResult, ideal: SweepResult) -> list[str]:
    """Where a measured sweep beats the ideal server in what no stall can speed up: a level's
    tokens cannot all arrive sooner than the server's rules allow (nothing more than 1 % faster),
    nor, where no request waits for a slot, a first token before its prefill (1 ms of slack).
    Not among these: the per-user rate, since a stalled client reads the tokens that queued
    meanwhile in one burst and the gaps between them shrink (9,312 tok/s against the model's 189
    was seen beside a CPU hog); and TTFT where requests queue, since a stall reorders who waits."""
    problems = []
    for real, model in zip(measured.levels, ideal.levels, strict=True):
        checks = {"agg_tok_s": real.agg_tok_s <= model.agg_tok_s * 1.01}
        if real.conc <= SHORT_SERVER.slots:
            checks["ttft_p50_ms"] = real.ttft_p50_ms >= model.ttft_p50_ms - 1.0
        problems += [
            f"C={real.conc} {name}: measured {getattr(real, name):.1f}, model {getattr(model, name):.1f}"
            for name, ok in checks.items()
            if not ok
        ]
    return problems


def astray_from_the_model(measured: SweepResult, ideal: SweepResult) -> list[str]:
    """Where a sweep the server ran on schedule strays from the model, beyond what HTTP costs:
    * user_tok_s within 3 % either way: a median of per-request median gaps, each gap one step.
    * agg_tok_s at least 75 % of the model: a wrong slot count or growth moves it 2x (C = 4 on
      2 slots against 4), while HTTP (~2-4 ms a request) costs up to 12 %.
    * TTFT p50 from 5 ms below to 40 ms above: at C = 4 it is queueing (~100 ms here), at C = 1
      the 15 ms prefill plus HTTP. p95 is left out: of 12 requests it is the slowest one.
    """
    problems = []
    for real, model in zip(measured.levels, ideal.levels, strict=True):
        checks = {
            "user_tok_s": abs(real.user_tok_s / model.user_tok_s - 1) <= 0.03,
            "agg_tok_s": real.agg_tok_s >= model.agg_tok_s * 0.75,
            "ttft_p50_ms": model.ttft_p50_ms - 5.0 <= real.ttft_p50_ms <= model.ttft_p50_ms + 40.0,
        }
        problems += [
            f"C={real.conc} {name}: measured {getattr(real, name):.1f}, model {getattr(model, name):.1f}"
            for name, ok in checks.items()
            if not ok
        ]
    return problems


def test_a_short_real_sweep_matches_the_ideal_model(short_server):
    """Judged on the slow side only where the server kept its schedule.

    Other jobs on these 2 cores stall the process now and then (0.5 s was seen), and a stalled
    level runs slow of the model for reasons that are not the server's rules: a test that
    compared every sweep's speed with the model failed beside a busy neighbour in CI.
    The server counts how far it fell behind its schedule (PracticeApp.late_s); a sweep during
    which it fell behind by more than STALLS_JUDGED_THROUGH_S is judged on the fast side only,
    which holds on any machine, and the sweep is run again, up to five times. A wrong rule
    (slots, growth, prefill) moves the numbers on an unstalled run too, and fails there.
    """
    ideal = run_sweep(SHORT_SWEEP)
    judged: list[list[str]] = []
    for _attempt in range(5):
        progress: list[tuple[int, int, int, int]] = []
        late_before = short_server.app.late_s
        measured = run_real_sweep(
            short_server.api, SHORT_SWEEP, on_progress=lambda *a, seen=progress: seen.append(a)
        )
        assert not faster_than_the_model(measured, ideal)
        if short_server.app.late_s - late_before <= STALLS_JUDGED_THROUGH_S:
            judged.append(astray_from_the_model(measured, ideal))
            if not judged[-1]:
                break
    if judged:
        assert not judged[-1]
    else:
        warnings.warn(
            "every real sweep fell behind the server's schedule: judged on the fast side only", stacklevel=1
        )

    assert measured.params == ideal.params
    assert [lv.conc for lv in measured.levels] == [1, 4]
    assert [lv.requests for lv in measured.levels] == [12, 12]
    assert [lv.tokens for lv in measured.levels] == [lv.tokens for lv in ideal.levels]

    # The same JSON as the simulator: same keys, same shape.
    real_json, model_json = measured.as_dict(), ideal.as_dict()
    assert real_json.keys() == model_json.keys()
    assert [lv.keys() for lv in real_json["levels"]] == [lv.keys() for lv in model_json["levels"]]
    assert real_json["capacity"] == model_json["capacity"] == 4

    # One call as each level starts, then one per finished request.
    assert progress == [(0, 1, k, 12) for k in range(13)] + [(1, 4, k, 12) for k in range(13)]
    short_server.wait_idle()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_a_clear_error():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(
        LoadgenError, match=r"cannot connect \(Connection refused\); is the server running\?"
    ) as error:
        run_real_sweep(url, SweepParams(levels=(1,)))
    assert url in str(error.value)


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/v1", "127.0.0.1:8001/v1", "http:///v1", ""])
def test_bad_urls_are_refused(url):
    with pytest.raises(LoadgenError, match="URL"):
        run_real_sweep(url, SweepParams(levels=(1,)))


def test_http_errors_are_reported_with_the_servers_message(short_server):
    with pytest.raises(LoadgenError, match=r"GET .*/v2/models returned HTTP 404: Invalid URL"):
        run_real_sweep(f"{short_server.url}/v2", SweepParams(levels=(1,)))
    with pytest.raises(
        LoadgenError, match=r"POST .*/v1/chat/completions returned HTTP 404: .*'gpt-4o' does not"
    ):
        run_real_sweep(short_server.api, SweepParams(levels=(1,)), model="gpt-4o")


def test_a_server_too_slow_to_answer_times_out():
    # The first token comes after 15 ms, the second only 10 s later.
    with serving(ServerParams(step_ms=10_000.0)) as slow:
        with pytest.raises(LoadgenError, match=r"no answer within 0.3 s"):
            run_real_sweep(slow.api, SweepParams(levels=(1,)), timeout_s=0.3)
        slow.wait_idle()  # the abandoned request gave its slot back


async def not_openai(scope, receive, send):
    """A server that answers every request with an event stream that is not OpenAI's."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    if scope["path"].endswith("/models"):
        body, kind = b'{"object": "list", "data": [{"id": "other"}]}', b"application/json"
    else:
        body, kind = b"data: this is not json\n\n", b"text/event-stream"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    await send({"type": "http.response.body", "body": body})


def test_a_stream_in_another_format_is_a_clear_error():
    with serving(ServerParams(), app=not_openai) as other:
        with pytest.raises(LoadgenError, match="streamed something that is not JSON"):
            run_real_sweep(other.api, SweepParams(levels=(1,)))


def test_an_error_in_progress_reporting_stops_the_sweep(short_server):
    """A caller (say, a web page whose user gave up) can stop a sweep from its callback."""

    class Stop(Exception):
        pass

    def on_progress(level_index, conc, done, total):
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        asyncio.run(measure_sweep(short_server.api, SHORT_SWEEP, on_progress=on_progress))
    short_server.wait_idle()

"""What a serving engine adds around its steps (felab_sim/engine/serving/servers.py): SGLang's
prompts-first order, CUDA-graph padding, a request's fixed cost and SGLang's poll for requests.
Each test fails when its part is taken out of the engine."""

from __future__ import annotations

from dataclasses import replace

import pytest

from felab_sim.engine.hardware.hardware import hardware_preset
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving import servers
from felab_sim.engine.serving import serving_validation as sv
from felab_sim.engine.serving.kv_pool import BlockCost, BlockPool
from felab_sim.engine.serving.scheduler import Replica, Request
from felab_sim.engine.serving.servers import Server, sglang_graph_sizes, vllm_graph_sizes
from felab_sim.engine.serving.serving_runs import FIT, split
from felab_sim.engine.serving.simulate import ClosedLoop, EngineSettings, TraceRequest, simulate

ONE_BYTE_BLOCKS = BlockCost(block_size=4, full_bytes=1.0, sliding_bytes=0.0, window_blocks=0)
H100 = hardware_preset("h100-sxm")
LLAMA = preset("Llama-3.1-8B").shape
QWEN_MOE = preset("Qwen3-30B-A3B").shape


def two_decoding_and_one_waiting(prefill_first: bool) -> Replica:
    replica = Replica(BlockPool(1000, ONE_BYTE_BLOCKS, False), 8, 64, prefill_first=prefill_first)
    for number in (0, 1):
        replica.waiting.append(Request(number, 0.0, 8, 10))
    replica.complete(replica.schedule(), 1.0)  # both prompts done: both decode from now on
    replica.waiting.append(Request(2, 1.0, 20, 10))
    return replica


def test_sglang_runs_a_new_prompt_alone_while_vllm_mixes_it_with_the_decodes():
    sglang = two_decoding_and_one_waiting(prefill_first=True).schedule()
    assert [(item.request.request_id, item.tokens) for item in sglang] == [(2, 20)]
    vllm = two_decoding_and_one_waiting(prefill_first=False).schedule()
    assert [(item.request.request_id, item.tokens) for item in vllm] == [(0, 1), (1, 1), (2, 20)]


def test_sglang_decodes_when_nothing_waits_and_finishes_a_chunked_prompt_before_decoding():
    replica = Replica(BlockPool(1000, ONE_BYTE_BLOCKS, False), 8, 16, prefill_first=True)
    replica.waiting.append(Request(0, 0.0, 8, 10))
    replica.complete(replica.schedule(), 1.0)
    replica.waiting.append(Request(1, 1.0, 40, 10))
    steps = []
    for at in range(2, 7):
        batch = replica.schedule()
        steps.append([(item.request.request_id, item.tokens) for item in batch])
        replica.complete(batch, float(at))
    # 40 tokens in chunks of 16 while request 0 waits; then both decode together.
    assert steps == [[(1, 16)], [(1, 16)], [(1, 8)], [(0, 1), (1, 1)], [(0, 1), (1, 1)]]


def test_the_capture_sizes_are_the_engines_defaults():
    assert vllm_graph_sizes(16)[:6] == (1, 2, 4, 8, 16, 24) and vllm_graph_sizes(16)[-1] == 32
    assert vllm_graph_sizes(256)[-3:] == (480, 496, 512)
    assert vllm_graph_sizes(16, 2048)[-1] == 2048
    assert sglang_graph_sizes(128)[:7] == (1, 2, 4, 8, 12, 16, 24) and sglang_graph_sizes(128)[-1] == 128
    assert sglang_graph_sizes(100)[-2:] == (96, 100)


def decode_tpot(server: Server | None, sequences: int = 9) -> float:
    run = simulate(
        [TraceRequest(0.0, 16, 64)] * sequences,
        QWEN_MOE,
        H100,
        EngineSettings(max_num_seqs=sequences),
        sample_interval=None,
        server=server,
    )
    return run.summary["tpot_mean_ms"]


def test_a_decode_batch_is_padded_to_its_cuda_graphs_size():
    # Nine sequences run the graph of 16: the padding's rows reach more of the 128 experts.
    bare = decode_tpot(None)
    padded = decode_tpot(Server("vllm", graph_sizes=(1, 16)))
    assert padded > bare
    assert padded == pytest.approx(decode_tpot(Server("vllm", graph_sizes=(16,)), 16), rel=0.05)
    # A batch past the largest graph runs as it is.
    assert decode_tpot(Server("vllm", graph_sizes=(1, 8))) == bare


def test_only_vllm_pads_a_step_with_a_prompt():
    server = Server("sglang", graph_sizes=(1, 2048))
    assert server.padded(9, decode_only=True) == 2048
    assert server.padded(9, decode_only=False) == 9
    assert replace(server, graphs_with_prompts=True).padded(9, decode_only=False) == 2048


def one_at_a_time(server: Server | None):
    return simulate(
        [TraceRequest(0.0, 200, 20)],
        LLAMA,
        H100,
        closed_loop=ClosedLoop(1, 3),
        sample_interval=None,
        server=server,
    )


def test_a_requests_fixed_cost_lengthens_its_ttft_and_nothing_else():
    bare = one_at_a_time(None)
    costly = one_at_a_time(Server("vllm", request_fixed_s=0.05))
    for before, after in zip(bare.requests, costly.requests, strict=True):
        assert after.ttft == pytest.approx(before.ttft + 0.05)
        assert after.tpot == pytest.approx(before.tpot)
    # The closed loop sends each request when the last one finishes: the run is 3 costs longer.
    assert costly.summary["total_s"] == pytest.approx(bare.summary["total_s"] + 3 * 0.05)


def test_the_front_end_serves_a_burst_one_request_at_a_time():
    burst = [TraceRequest(0.0, 200, 20)] * 4

    def ttfts(server: Server) -> list[float]:
        run = simulate(burst, LLAMA, H100, sample_interval=None, server=server)
        return [r.ttft for r in run.requests]

    delay_only = ttfts(Server("vllm", request_fixed_s=0.03))
    served_in_turn = ttfts(Server("vllm", request_fixed_s=0.03, request_serial_s=0.01))
    # With the delay alone the burst reaches the scheduler at once and shares one prefill step;
    # served in turn, the k-th reaches it 10 ms after the one before (the first after 40 ms).
    assert max(delay_only) == pytest.approx(min(delay_only))
    assert served_in_turn[0] >= 0.04
    assert served_in_turn[3] >= 0.03 + 4 * 0.01
    assert served_in_turn[3] - served_in_turn[0] >= 3 * 0.01 - 1e-9
    # Requests sent apart never queue: each pays the cost once.
    apart = [TraceRequest(10.0 * i, 200, 20) for i in range(4)]
    run = simulate(apart, LLAMA, H100, sample_interval=None, server=Server("vllm", request_serial_s=0.01))
    alone = simulate(apart, LLAMA, H100, sample_interval=None)
    for with_cost, without in zip(run.requests, alone.requests, strict=True):
        assert with_cost.ttft == pytest.approx(without.ttft + 0.01)


def late_arrival_ttft(recv_interval: int) -> float:
    # Request 0 decodes 200 tokens; request 1 (4 tokens) ends early and request 2 is sent then.
    sizes = [TraceRequest(0.0, 32, 200), TraceRequest(0.0, 32, 4), TraceRequest(0.0, 32, 4)]
    run = simulate(
        sizes,
        LLAMA,
        H100,
        closed_loop=ClosedLoop(2, 3),
        sample_interval=None,
        server=Server("sglang", prefill_first=True, recv_interval=recv_interval),
    )
    return run.requests[2].ttft


def test_sglangs_poll_interval_holds_a_new_request_back_for_decode_steps():
    every_step = late_arrival_ttft(1)
    every_30 = late_arrival_ttft(30)
    step = 2 * 0.002  # a decode step of two 8B sequences on an H100 takes a few ms
    assert every_30 > every_step + 10 * step


def test_the_request_cost_is_fitted_on_fitted_runs_only(monkeypatch):
    seen = []

    def fake_simulate(
        run, work_budget=None, request_fixed_s=None, request_serial_s=None, four_bit_grouped_share=None
    ):
        assert request_fixed_s == 0.0  # the fit measures what the steps alone leave
        seen.append(run.run_id)
        return run

    monkeypatch.setattr(sv, "simulate_run", fake_simulate)
    monkeypatch.setattr(sv, "predicted_figures", lambda run, result: {"ttft_median_ms": 10.0})
    value, found, _ = sv.fit_request_fixed(servers.SGLANG)
    assert seen and all(split()[run_id] == FIT for run_id in seen)
    assert len(found) >= 3 and all("sglang" in run_id for run_id in seen)
    expected = sorted(run.ttft_median_ms - 10.0 for run in sv.runs(group=FIT) if run.run_id in seen)
    assert value == pytest.approx(expected[len(expected) // 2] / 1000)


def test_each_engines_request_cost_is_positive_and_below_a_second():
    for engine in (servers.VLLM, servers.SGLANG):
        assert 0 < servers.REQUEST_FIXED_S[engine] < 1

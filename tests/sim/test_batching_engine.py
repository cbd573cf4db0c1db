"""The continuous-batching engine: each scheduler rule on a trace small enough to work out by hand,
the KV pool's arithmetic, the parallelisms' directions, and properties over random traces.

Pure: no database, no fetched data, nothing timed by the wall clock. The scheduler tests drive
one replica step by step with a pool counted in whole blocks (one byte a block), so every
number below is a count of tokens or blocks.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from felab_sim.engine.hardware.hardware import HARDWARE, hardware_preset
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving.kv_pool import (
    DEFAULT_OVERHEAD_BYTES,
    BlockCost,
    BlockPool,
    block_cost,
    size_pool,
)
from felab_sim.engine.serving.scheduler import Replica, Request, Scheduled
from felab_sim.engine.serving.simulate import EngineSettings, TraceRequest, read_trace, simulate
from felab_sim.engine.serving.simulate import _load as step_load
from felab_sim.engine.serving.step_time import Parallelism, StepLoad, StepPricer, calibration_for, model_cost

BLOCK = 4
ONE_BYTE_BLOCKS = BlockCost(block_size=BLOCK, full_bytes=1.0, sliding_bytes=0.0, window_blocks=0)


def replica(blocks: int = 100, seqs: int = 8, budget: int = 8, prefix_caching: bool = True) -> Replica:
    return Replica(BlockPool(blocks, ONE_BYTE_BLOCKS, prefix_caching), seqs, budget)


def request(i: int, prompt: int, output: int, **prefix) -> Request:
    return Request(i, 0.0, prompt, output, **prefix)


def step(engine: Replica, now: float) -> dict[int, int]:
    """One step: which request computed how many tokens."""
    batch = engine.schedule()
    engine.complete(batch, now)
    return {item.request.request_id: item.tokens for item in batch}


# --- the token budget ------------------------------------------------------------------------


def test_a_long_prompt_is_chunked_by_the_budget_and_the_next_one_waits_for_budget():
    # Budget 8. A's 20-token prompt: 8 + 8 + 4. B (4 tokens) is admitted only in the third step,
    # with the 4 tokens A leaves; both sample their first token at the end of step 3.
    engine = replica(budget=8)
    a, b = request(0, 20, 3), request(1, 4, 2)
    engine.waiting.extend([a, b])
    assert step(engine, 1.0) == {0: 8}
    assert step(engine, 2.0) == {0: 8}
    assert step(engine, 3.0) == {0: 4, 1: 4}
    assert a.first_token == b.first_token == 3.0
    # Then decodes, one token each: B's second and last token at step 4, A's third at step 5.
    assert step(engine, 4.0) == {0: 1, 1: 1}
    assert b.last_token == 4.0 and b.finished
    assert step(engine, 5.0) == {0: 1}
    assert a.last_token == 5.0 and a.finished and not engine.running


def test_running_requests_are_served_before_waiting_ones():
    # A decodes (1 token) first; B's prompt gets the 7 left of the budget of 8.
    engine = replica(budget=8)
    a = request(0, 4, 5)
    engine.waiting.append(a)
    step(engine, 1.0)
    engine.waiting.append(request(1, 30, 1))
    assert step(engine, 2.0) == {0: 1, 1: 7}


# --- max_num_seqs and first come first served ------------------------------------------------


def test_max_num_seqs_caps_the_running_set():
    engine = replica(seqs=2, budget=100)
    engine.waiting.extend(request(i, 4, 2 + i) for i in range(3))
    assert step(engine, 1.0) == {0: 4, 1: 4}  # the third waits for a slot
    assert step(engine, 2.0) == {0: 1, 1: 1}  # 0 finishes (2 tokens)
    assert step(engine, 3.0) == {1: 1, 2: 4}  # its slot goes to 2


def test_the_first_waiting_request_that_does_not_fit_holds_back_the_queue():
    # 10 blocks; A holds 5 (20 tokens). B needs 8 blocks (32 tokens): it does not fit, and C
    # (1 block) behind it is not let past.
    engine = replica(blocks=10, budget=100)
    engine.waiting.append(request(0, 20, 10))
    step(engine, 1.0)
    engine.waiting.extend([request(1, 32, 1), request(2, 4, 1)])
    assert step(engine, 2.0) == {0: 1}
    assert [r.request_id for r in engine.waiting] == [1, 2]


# --- block accounting ------------------------------------------------------------------------


def test_blocks_are_reserved_for_the_whole_prompt_grow_by_block_and_come_back():
    engine = replica(blocks=10, budget=4, prefix_caching=False)
    a = request(0, 9, 6)
    engine.waiting.append(a)
    step(engine, 1.0)  # 4 of 9 prompt tokens computed, but the whole prompt's 3 blocks reserved
    assert engine.pool.used_bytes == 3
    step(engine, 2.0)
    step(engine, 3.0)  # prompt done (9 tokens): first token; 10 tokens, still 3 blocks
    assert a.generated == 1 and engine.pool.used_bytes == 3
    step(engine, 4.0)  # computes token 10, generates the 11th
    step(engine, 5.0)  # computes token 11, generates the 12th
    step(engine, 6.0)  # computes token 12: 12 tokens of KV, the 13th generated
    assert engine.pool.used_bytes == 3
    step(engine, 7.0)  # computes token 13: a fourth block
    assert engine.pool.used_bytes == 4
    step(engine, 8.0)  # the 6th output token: done, every block back
    assert a.finished and engine.pool.used_bytes == 0 and engine.pool.free_bytes == 10


# --- preemption ------------------------------------------------------------------------------


def test_when_blocks_run_out_the_newest_running_request_is_preempted_and_recomputed():
    # 4 blocks. A (0) and B (1) each have a 7-token prompt: 2 blocks each, the pool full. At
    # the first decode both need no new block (8 tokens fit in 2 blocks); at the next, A's 9th
    # token needs a third block: B, the newest, is preempted (its blocks freed, its computed
    # tokens set to 0) and put back at the front of the queue. Nothing else is admitted in a
    # step that preempted.
    engine = replica(blocks=4, budget=100, prefix_caching=False)
    a, b = request(0, 7, 5), request(1, 7, 5)
    engine.waiting.extend([a, b])
    assert step(engine, 1.0) == {0: 7, 1: 7}
    assert step(engine, 2.0) == {0: 1, 1: 1}
    assert step(engine, 3.0) == {0: 1}
    assert b.preemptions == 1 and b.num_computed == 0 and list(engine.waiting) == [b]
    assert engine.running == [a] and engine.pool.used_bytes == 3
    # B comes back when A is done: its prompt and its 2 outputs so far (9 tokens) recomputed.
    while not a.finished:
        step(engine, 4.0)
    assert step(engine, 9.0) == {1: 9}
    assert b.generated == 3 and b.first_token == 1.0


def test_the_request_being_scheduled_preempts_itself_when_it_is_the_newest():
    engine = replica(blocks=2, budget=100, prefix_caching=False)
    a, b = request(0, 4, 6), request(1, 4, 6)
    engine.waiting.extend([a, b])
    step(engine, 1.0)  # 1 block each, full
    step(engine, 2.0)  # A's 5th token needs a block: B preempted; A scheduled
    assert b.preemptions == 1 and engine.running == [a]


# --- prefix caching --------------------------------------------------------------------------


def test_a_shared_prefix_is_computed_once_in_whole_blocks():
    # A and B share their first 10 tokens: 2 whole blocks (8 tokens). Once A's prompt is
    # computed, B finds them and computes only its other 4 of 12 tokens.
    engine = replica(blocks=20, budget=100)
    a = request(0, 12, 5, prefix_key="system", prefix_tokens=10)
    b = request(1, 12, 2, prefix_key="system", prefix_tokens=10)
    engine.waiting.append(a)
    step(engine, 1.0)
    engine.waiting.append(b)
    assert step(engine, 2.0) == {0: 1, 1: 4}
    assert b.cached_tokens == 8
    # The shared blocks are held once: A's 4 (13 tokens) + B's 1 of its own.
    assert engine.pool.used_bytes == 5


def test_without_prefix_caching_nothing_is_found():
    engine = replica(blocks=20, budget=100, prefix_caching=False)
    a = request(0, 12, 2, prefix_key="system", prefix_tokens=10)
    b = request(1, 12, 2, prefix_key="system", prefix_tokens=10)
    engine.waiting.append(a)
    step(engine, 1.0)
    engine.waiting.append(b)
    assert step(engine, 2.0) == {0: 1, 1: 12}


def test_a_whole_prompt_in_the_cache_still_computes_its_last_token():
    engine = replica(blocks=20, budget=100)
    engine.waiting.append(request(0, 8, 1, prefix_key="p", prefix_tokens=8))
    step(engine, 1.0)
    engine.waiting.append(request(1, 8, 1, prefix_key="p", prefix_tokens=8))
    assert step(engine, 2.0) == {1: 4}  # 1 of 2 blocks found: 8 − 1 tokens at most


def test_a_preempted_request_finds_its_own_blocks_when_it_comes_back():
    # 5 blocks; A and B have 8-token prompts (2 blocks each, published to the cache once
    # computed). At step 2 A takes the fifth block for its 9th token; B's 9th finds none and B,
    # the newest, preempts itself. Its 2 blocks stay cached, A needs no more (12 tokens at
    # most), so when A is done B comes back with 8 of its 9 tokens found: it computes 1.
    engine = replica(blocks=5, budget=100)
    a, b = request(0, 8, 4), request(1, 8, 8)
    engine.waiting.extend([a, b])
    step(engine, 1.0)
    assert step(engine, 2.0) == {0: 1}
    assert b.preemptions == 1
    assert step(engine, 3.0) == {0: 1}  # B does not fit beside A yet
    assert step(engine, 4.0) == {0: 1}
    assert a.finished
    assert step(engine, 5.0) == {1: 1}
    assert b.cached_tokens == 8 and b.generated == 2


# --- the KV pool -----------------------------------------------------------------------------


def test_the_kv_pool_of_llama_3_1_8b_on_the_rtx_4090_by_hand():
    # KV per token: 2 (K, V) × 8 KV heads × 128 × 2 bytes × 32 layers = 131,072 B; a block of
    # 16 tokens 2,097,152 B. Memory: 25,250,627,584 B (CUDA's total on that card) × 0.9 =
    # 22,725,564,825.6; weights 8,030,261,248 × 2 = 16,060,522,496; overhead 1.2 GiB =
    # 1,288,490,188. Left: 5,376,552,141.6 B = 2,563 whole blocks = 41,008 tokens, 1.0% under
    # the 41,408 vLLM reported on that run.
    shape = preset("Llama-3.1-8B").shape
    cost = block_cost(shape, 16, 2)
    assert cost.block_bytes == 2_097_152
    pool = size_pool(25_250_627_584, 0.9, shape.total_params * 2, cost)
    assert DEFAULT_OVERHEAD_BYTES == 1_288_490_188
    assert pool.available_bytes == pytest.approx(5_376_552_141.6)
    assert pool.num_blocks == 2563 and pool.kv_tokens == 41_008
    assert abs(pool.kv_tokens / 41_408 - 1) < 0.03


def test_sliding_layers_hold_no_more_than_their_window():
    shape = preset("gpt-oss-20b").shape  # 12 sliding layers (window 128) and 12 full
    cost = block_cost(shape, 16, 2)
    per_layer_block = 2 * 8 * 64 * 2 * 16
    assert cost.full_bytes == cost.sliding_bytes == 12 * per_layer_block
    assert cost.window_blocks == 128 // 16 + 1
    assert cost.bytes_for(16_000) == cost.full_bytes * 1000 + cost.sliding_bytes * 9


# --- parallelism -----------------------------------------------------------------------------


def _decode_load(batch: int, context: int) -> StepLoad:
    return StepLoad(batch, batch, batch * context, 0, batch * context, 0, batch * context)


def test_a_step_prices_its_one_token_sequences_as_decodes_and_its_prompt_chunks_apart():
    # MLA runs the two differently (model_cost.mla_decode_pair_flops): the step says which is which.
    decoding = Scheduled(Request(0, 0.0, 100, 20), tokens=1, context_before=110)
    prompt = Scheduled(Request(1, 0.0, 300, 20), tokens=200, context_before=0)
    load = step_load([decoding, prompt], None)
    assert load.decode_pairs == 111
    assert load.attention_pairs == 111 + 200 * 201 / 2


def _step_s(model: str, hardware: str, parallel: Parallelism, load: StepLoad, group: int) -> float:
    shape = preset(model).shape
    cost = model_cost(shape, 2, 2, parallel)
    pricer = StepPricer(cost, hardware_preset(hardware), calibration_for(hardware_preset(hardware)), parallel)
    return pricer.step_seconds(load, group)


def test_tensor_parallel_splits_the_weights_and_speeds_a_decode_step_but_pays_all_reduces():
    one = _step_s("Llama-3.1-70B", "h100-sxm", Parallelism(tensor=4), _decode_load(64, 2000), 64)
    two = _step_s("Llama-3.1-70B", "h100-sxm", Parallelism(tensor=8), _decode_load(64, 2000), 64)
    assert two < one
    shape = preset("Llama-3.1-70B").shape
    tp4 = model_cost(shape, 2, 2, Parallelism(tensor=4))
    tp8 = model_cost(shape, 2, 2, Parallelism(tensor=8))
    assert tp8.weight_bytes_per_gpu == pytest.approx(tp4.weight_bytes_per_gpu / 2)
    pricer = StepPricer(
        tp8, hardware_preset("h100-sxm"), calibration_for(hardware_preset("h100-sxm")), Parallelism(tensor=8)
    )
    assert pricer.communication_seconds(_decode_load(64, 2000), 64) > 0


def test_expert_parallel_spreads_the_experts_and_adds_their_exchange():
    shape = preset("Qwen3-30B-A3B").shape
    replicated = model_cost(shape, 2, 2, Parallelism(data=2))
    spread = model_cost(shape, 2, 2, Parallelism(data=2, expert=True))
    experts = len(shape.experts.moe_layers) * shape.experts.routed_experts * shape.expert_params()
    assert replicated.weight_bytes_per_gpu - spread.weight_bytes_per_gpu == pytest.approx(experts / 2 * 2)
    pricer = StepPricer(
        spread,
        hardware_preset("rtx-pro-6000"),
        calibration_for(hardware_preset("rtx-pro-6000")),
        Parallelism(data=2, expert=True),
    )
    assert pricer.communication_seconds(_decode_load(100, 1000), 200) > 0


def test_a_few_tokens_read_only_the_experts_they_are_routed_to():
    parallel = Parallelism()
    few = _step_s("Qwen3-30B-A3B", "h100-sxm", parallel, _decode_load(1, 10), 1)
    many = _step_s("Qwen3-30B-A3B", "h100-sxm", parallel, _decode_load(64, 10), 64)
    assert many > 3 * few


def _heavy_trace(n: int = 60) -> list[TraceRequest]:
    return [TraceRequest(i * 0.01, 1500, 300) for i in range(n)]


def test_data_parallel_replicas_share_a_heavy_load():
    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    base = EngineSettings(max_num_seqs=16)
    one = simulate(_heavy_trace(), shape, hardware, base)
    two = simulate(_heavy_trace(), shape, hardware, replace(base, data_parallel=2))
    assert two.summary["latency_mean_ms"] < one.summary["latency_mean_ms"]
    assert two.summary["kv_tokens"] == 2 * one.summary["kv_tokens"]


def test_running_out_of_kv_blocks_preempts_and_lengthens_the_first_token():
    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    trace = [TraceRequest(i * 0.01, 3000, 800) for i in range(40)]
    tight = simulate(trace, shape, hardware, EngineSettings(gpu_memory_utilization=0.82))
    roomy = simulate(trace, shape, hardware, EngineSettings(gpu_memory_utilization=0.9))
    assert tight.pool.kv_tokens < roomy.pool.kv_tokens
    assert tight.summary["ttft_mean_ms"] > roomy.summary["ttft_mean_ms"]
    assert roomy.preemptions > 0 or roomy.summary["max_running"] < 40


# --- the trace, the hardware ------------------------------------------------------------------


def test_the_trace_reads_llmservingsims_fields_and_starts_at_zero():
    lines = [
        '{"input_toks": 10, "output_toks": 3, "arrival_time": 1700000000.5, "queued_ts": 9}',
        '{"input_toks": 20, "output_toks": 4, "arrival_time": 1700000001.0}',
    ]
    assert read_trace(lines) == [TraceRequest(0.0, 10, 3), TraceRequest(0.5, 20, 4)]
    with pytest.raises(ValueError, match="output_toks"):
        read_trace(['{"input_toks": 1, "arrival_time": 0}'])


def test_every_hardware_preset_names_its_spec_sheet_and_where_it_was_read():
    names = {h.name for h in HARDWARE}
    assert {"rtx-4090", "rtx-pro-6000", "h100-sxm", "h200", "a100-80gb", "dgx-spark"} <= names
    for hardware in HARDWARE:
        assert hardware.source.startswith("https://") and hardware.checked_in
        assert hardware.memory_unit in {"GB", "GiB"}
        unit = 10**9 if hardware.memory_unit == "GB" else 2**30
        if not hardware.memory_bytes_measured:
            assert hardware.memory_bytes == hardware.memory_gb * unit
    assert hardware_preset("dgx-spark").bf16_flops is None  # not published: not invented
    with pytest.raises(ValueError, match="no published dense BF16"):
        hardware_preset("dgx-spark").peak_flops(2)


def test_a_request_that_can_never_fit_is_refused():
    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    with pytest.raises(ValueError, match="do not fit"):
        simulate([TraceRequest(0.0, 50_000, 10)], shape, hardware)


# --- properties ------------------------------------------------------------------------------

requests_st = st.lists(
    st.tuples(st.integers(1, 600), st.integers(1, 120), st.floats(0, 2)), min_size=1, max_size=12
)
small = EngineSettings(max_num_seqs=4, max_num_batched_tokens=256, gpu_memory_utilization=0.72)


def _trace(rows, at_zero: bool = False) -> list[TraceRequest]:
    return [TraceRequest(0.0 if at_zero else t, p, o) for p, o, t in rows]


@settings(max_examples=25, deadline=None)
@given(requests_st)
def test_every_request_finishes_with_all_its_tokens_in_order(rows):
    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    result = simulate(_trace(rows), shape, hardware, small)
    assert len(result.requests) == len(rows)
    assert sum(r.output_toks for r in result.requests) == sum(o for _, o, _ in rows)
    for r in result.requests:
        assert r.queued_ts <= r.first_token_ts <= r.last_token_ts
        assert (r.output_toks == 1) == (r.first_token_ts == r.last_token_ts)


@settings(max_examples=25, deadline=None)
@given(requests_st, requests_st)
def test_more_load_never_makes_the_mean_latency_lower(rows, extra):
    # The same requests, all at time 0, with more queued behind them: those first in line keep
    # their place (first come first served, the newest preempted first), and every step is at
    # least as long, so their mean latency cannot drop.
    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    alone = simulate(_trace(rows, at_zero=True), shape, hardware, small)
    crowded = simulate(_trace(rows + extra, at_zero=True), shape, hardware, small)
    first = len(rows)
    mean_alone = sum(r.latency for r in alone.requests) / first
    mean_crowded = sum(r.latency for r in crowded.requests[:first]) / first
    assert mean_crowded >= mean_alone - 1e-9


def test_the_summary_uses_llmservingsims_definitions():
    from felab_sim.engine.serving.run_results import measured_summary

    rows = [
        {
            "input_toks": 5,
            "output_toks": 11,
            "arrival_time": 100.0,
            "queued_ts": 10.0,
            "first_token_ts": 10.5,
            "last_token_ts": 11.5,
        },
        {
            "input_toks": 5,
            "output_toks": 3,
            "arrival_time": 101.0,
            "queued_ts": 11.0,
            "first_token_ts": 12.0,
            "last_token_ts": 12.2,
        },
    ]
    summary = measured_summary(rows)
    # TTFT first − queued: 0.5 and 1.0; TPOT (last − first) ÷ (output − 1): 0.1 and 0.1;
    # latency last − queued: 1.5 and 1.2; total from the first queued to the last token: 2.2 s.
    assert summary["ttft_mean_ms"] == pytest.approx(750)
    assert summary["tpot_mean_ms"] == pytest.approx(100)
    assert summary["latency_mean_ms"] == pytest.approx(1350)
    assert summary["total_s"] == pytest.approx(2.2)
    assert summary["output_tok_s"] == pytest.approx(14 / 2.2)


def test_the_engine_imports_without_django():
    from tests.sim.test_engine_boundary import ROOT, import_without_django, modules_under

    modules = [*modules_under(ROOT / "felab_sim" / "engine")]
    assert "felab_sim.engine.serving.scheduler" in modules and "felab_sim.engine.hardware.hardware" in modules
    done = import_without_django(*modules)
    assert done.returncode == 0, done.stderr


def test_a_closed_loop_keeps_its_concurrency_and_sends_every_request():
    from felab_sim.engine.serving.simulate import ClosedLoop

    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    sizes = [TraceRequest(0.0, 200, 20), TraceRequest(0.0, 50, 40)]
    result = simulate(sizes, shape, hardware, closed_loop=ClosedLoop(concurrency=3, requests=10))
    assert len(result.requests) == 10 and result.max_running == 3
    assert [r.input_toks for r in result.requests[:4]] == [200, 50, 200, 50]
    # Each request after the first three is sent when an earlier one finishes.
    last_tokens = sorted(r.last_token_ts for r in result.requests)
    assert sorted(r.arrival_time for r in result.requests)[3:] == last_tokens[:7]


def test_the_concurrency_sweep_rises_with_batching_while_each_user_slows():
    from felab_sim.engine.serving.simulate import concurrency_sweep

    shape, hardware = preset("Llama-3.1-8B").shape, hardware_preset("rtx-4090")
    one, eight = concurrency_sweep([1, 8], [TraceRequest(0.0, 300, 64)], shape, hardware)
    assert one["requests"] == 12 and eight["requests"] == 24
    assert eight["agg_tok_s"] > 4 * one["agg_tok_s"]
    assert eight["user_tok_s"] < one["user_tok_s"]

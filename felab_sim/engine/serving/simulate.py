"""Run a trace through the continuous-batching engine and sum it up.

One clock for every replica: a step starts when the last one ended, schedules each replica's
batch, lasts as long as the slowest replica's (data-parallel ranks of a mixture of experts step
together in vLLM, their expert layers being one collective; dense ranks are held to the same
clock here, a simplification), and its tokens land at its end. An idle engine waits for the next
arrival. Requests reach the replicas through vLLM's balancer: the rank with the lowest
4 × waiting + running (vllm-project/vllm, vllm/v1/engine/core_client.py,
DPLBAsyncMPClient.get_core_engine_for_request; there the counts arrive from a coordinator a
little late, here they are exact).

Per request the output follows LLMServingSim's requests.jsonl: arrival, queued (the same instant
here: when the client sent it), first and last token. TTFT = first token − queued; TPOT = (last −
first token) ÷ (output tokens − 1); latency = last token − queued.

Without a ``server`` the engine is vLLM's scheduler with nothing around its steps. With one
(servers.py) it runs the engine's own order of prompts and decodes, pads a decode-only step to
its next CUDA-graph size, and a request reaches the scheduler its fixed cost after it was sent
(the API server, the tokeniser): the TTFT the client sees.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..core.params import ParamError
from ..hardware.hardware import Hardware
from ..models.model_shapes import AttentionKind, ModelShape
from . import serving_defaults
from .kv_pool import DEFAULT_OVERHEAD_BYTES, BlockPool, PoolSize, block_cost, size_pool
from .run_results import Counters, RequestResult, Result, Sample, nearest_rank, summarise
from .scheduler import Replica, Request, Scheduled
from .servers import Server
from .step_time import Calibration, Parallelism, StepLoad, StepPricer, calibration_for, model_cost


@dataclass(frozen=True)
class EngineSettings:
    """vLLM's engine arguments of the same names."""

    max_num_seqs: int = serving_defaults.MAX_NUM_SEQS
    max_num_batched_tokens: int = 2048
    block_size: int = 16
    gpu_memory_utilization: float = serving_defaults.GPU_MEMORY_UTILIZATION
    prefix_caching: bool = True
    tensor_parallel: int = 1
    data_parallel: int = 1
    expert_parallel: bool = False
    bytes_per_param: float = 2.0  # BF16 weights
    kv_bytes_per_value: float = 2.0  # kv_cache_dtype "auto" on a BF16 model
    overhead_bytes: int = DEFAULT_OVERHEAD_BYTES

    @property
    def parallel(self) -> Parallelism:
        return Parallelism(self.tensor_parallel, self.data_parallel, self.expert_parallel)


@dataclass(frozen=True)
class TraceRequest:
    arrival: float  # seconds
    prompt_tokens: int
    output_tokens: int
    prefix_key: str | None = None
    prefix_tokens: int = 0


class WorkBudgetExceeded(ParamError):
    """The run needed more work than its caller allowed (a web request's budget).

    ``cause`` says what ran out: "steps" (the engine's steps and the blocks they filled) or "time"
    (the timeseries' samples: the simulated time ran long, on a slow GPU or between sparse
    arrivals). ``idle_s`` is how much of ``simulated_s`` the engine sat waiting for an arrival,
    so a caller can name the setting to change."""

    def __init__(
        self, param: str, message: str, cause: str = "steps", simulated_s: float = 0.0, idle_s: float = 0.0
    ) -> None:
        super().__init__(param, message)
        self.cause = cause
        self.simulated_s = simulated_s
        self.idle_s = idle_s


# Work units: one is a request scheduled in a step. A replica's step costs about 4 of them and a
# block of prompt tokens (hashed and cached) about 1.5: fitted by least squares over the page's kinds
# of run by bench/bench_engine_web.py --fit (a unit 0.8–2.3 µs of CPU there, 2026-12-01).
STEP_WORK_UNITS = 4.0
BLOCK_WORK_UNITS = 1.5
# A timeseries sample costs about 1.5 units (2.4 µs of CPU against 1.6 µs a unit of the default
# run, 2026-12-04). Samples are counted against the budget beside the steps' work (Result.work
# stays the steps'): simulated time is free to grow (0.01 GB/s, one arrival a day) and each
# sample of it is not.
SAMPLE_WORK_UNITS = 1.5
# A cached block a lookup finds costs about half a unit (0.8 µs), counted the same way: a request
# preempted with a long cached prompt looks it all up again every step it waits (BlockPool.found).
FOUND_WORK_UNITS = 0.5
# The budget of a caller that sets none: every run stops, whatever its settings (about 10-40 s
# of CPU). The command line passes math.inf; the web passes its own caps (limits.py).
MAX_WORK = 20_000_000.0


def read_trace(lines: Iterable[str]) -> list[TraceRequest]:
    """LLMServingSim's requests file: one JSON object a line with ``input_toks``,
    ``output_toks`` and ``arrival_time`` (seconds, any origin: shifted so the first is 0)."""
    found = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = json.loads(line)
        try:
            found.append((float(row["arrival_time"]), int(row["input_toks"]), int(row["output_toks"])))
        except KeyError as missing:
            raise ValueError(f"line {number}: {missing.args[0]} missing") from None
    if not found:
        return []
    start = min(arrival for arrival, _, _ in found)
    return [TraceRequest(arrival - start, prompt, output) for arrival, prompt, output in found]


def _load(batch: list[Scheduled], window: int | None, server: Server | None = None) -> StepLoad:
    tokens = sampled = kv = kv_sliding = 0
    pairs = sliding_pairs = decode_pairs = 0.0
    for item in batch:
        request, n = item.request, item.tokens
        tokens += n
        end = item.context_before + n
        if end >= request.num_tokens:
            sampled += 1
        kv += end
        pairs += n * (item.context_before + (n + 1) / 2)
        if n == 1:  # one query token: the engines' decode path (MLA's absorbed form)
            decode_pairs += end
        if window is not None:
            kv_sliding += min(end, window)
            sliding_pairs += n * min(item.context_before + (n + 1) / 2, window)
    if server is not None and batch:
        # The step runs the CUDA graph of the next captured size: its padding's rows go through
        # every product (their attention reads no KV).
        tokens = server.padded(tokens, decode_only=tokens == len(batch))
    return StepLoad(tokens, sampled, kv, kv_sliding, pairs, sliding_pairs, decode_pairs)


EMPTY = StepLoad(0, 0, 0, 0, 0.0, 0.0)


def _choose_replica(replicas: list[Replica]) -> Replica:
    return min(replicas, key=lambda r: 4 * len(r.waiting) + len(r.running))


@dataclass(frozen=True)
class ClosedLoop:
    """Lesson 03's load: ``concurrency`` requests at once from time 0, and each one that
    finishes replaced at once by the next, until ``requests`` have been sent. Their sizes are
    the trace's, in turn."""

    concurrency: int
    requests: int


def _check_settings(
    model: ModelShape, hardware: Hardware, settings: EngineSettings, sample_interval: float | None
) -> None:
    if settings.data_parallel < 1:
        raise ParamError("data_parallel", "data_parallel must be at least 1")
    if settings.parallel.expert and not model.is_moe:
        raise ParamError("expert_parallel", "expert_parallel needs a mixture-of-experts model")
    if sample_interval is not None and not sample_interval > 0:
        raise ValueError("sample_interval must be greater than 0")
    try:
        hardware.peak_flops(settings.bytes_per_param)  # a part with no published peak says so now
    except ValueError as error:
        raise ParamError("hardware", str(error)) from None


def _replicas(
    model: ModelShape,
    hardware: Hardware,
    settings: EngineSettings,
    calibration: Calibration,
    server: Server | None,
) -> tuple[PoolSize, StepPricer, list[Replica]]:
    """Each replica's KV pool sized from the memory its weights leave, and the step pricer."""
    parallel = settings.parallel
    cost = model_cost(model, settings.bytes_per_param, settings.kv_bytes_per_value, parallel)
    blocks = block_cost(model, settings.block_size, settings.kv_bytes_per_value, settings.tensor_parallel)
    pool = size_pool(
        hardware.memory_bytes,
        settings.gpu_memory_utilization,
        cost.weight_bytes_per_gpu,
        blocks,
        settings.overhead_bytes,
    )
    if pool.num_blocks == 0:
        raise ParamError(
            "gpu_memory_utilization",
            f"gpu_memory_utilization leaves no room for a KV block: the weights take "
            f"{cost.weight_bytes_per_gpu / 1e9:.1f} GB a GPU",
        )
    # A sliding layer drops blocks past its window, which the block cache below does not track:
    # prefix caching is modelled for models without sliding layers only.
    prefix_caching = settings.prefix_caching and not model.layers_of_kind(AttentionKind.SLIDING)
    replicas = [
        Replica(
            BlockPool(pool.num_blocks, blocks, prefix_caching),
            settings.max_num_seqs,
            settings.max_num_batched_tokens,
            prefill_first=server is not None and server.prefill_first,
        )
        for _ in range(settings.data_parallel)
    ]
    return pool, StepPricer(cost, hardware, calibration, parallel), replicas


class _Sender:
    """Requests as the client sends them. Each reaches the scheduler after the server's front end
    (none without a ``server``): its times count from the send."""

    def __init__(self, server: Server | None) -> None:
        self.delay = server.request_fixed_s if server is not None else 0.0
        self.serial = server.request_serial_s if server is not None else 0.0
        self.front_end_free = 0.0

    def reaches_scheduler(self, sent: float) -> float:
        """The front end serves one request at a time for ``serial`` seconds (in the order they
        were sent: a closed loop and a sorted trace send in time order), then ``delay`` more."""
        if not self.serial:
            return sent + self.delay
        self.front_end_free = max(sent, self.front_end_free) + self.serial
        return self.front_end_free + self.delay

    def request(self, number: int, size: TraceRequest, sent: float) -> Request:
        return Request(
            number,
            self.reaches_scheduler(sent),
            size.prompt_tokens,
            size.output_tokens,
            size.prefix_key,
            size.prefix_tokens,
            sent=sent,
        )


def _first_requests(
    shapes: list[TraceRequest], closed_loop: ClosedLoop | None, sender: _Sender, capacity_tokens: int
) -> list[Request]:
    """The requests sent before the run starts: the whole trace, or a closed loop's first
    ``concurrency``; ParamError naming ``trace`` for a request that cannot run."""
    if closed_loop is not None:
        if closed_loop.concurrency < 1 or closed_loop.requests < 1 or not shapes:
            raise ParamError("trace", "a closed loop needs a concurrency, requests and a trace of sizes")
        first = min(closed_loop.concurrency, closed_loop.requests)
        pending = [sender.request(i, shapes[i % len(shapes)], 0.0) for i in range(first)]
    else:
        pending = [sender.request(i, t, t.arrival) for i, t in enumerate(shapes)]
    for number, size in enumerate(shapes):
        if size.prompt_tokens < 1 or size.output_tokens < 1:
            raise ParamError("trace", f"request {number}: prompt and output need at least 1 token")
        if size.prompt_tokens + size.output_tokens > capacity_tokens:
            raise ParamError(
                "trace",
                f"request {number}: {size.prompt_tokens + size.output_tokens} tokens "
                f"do not fit the {capacity_tokens}-token KV pool",
            )
    return pending


def _over_budget(
    cause: str, work_budget: float, now: float, idle: float, sample_interval: float | None
) -> WorkBudgetExceeded:
    spent = f"more than {work_budget:,.0f} units of simulation work"
    if cause == "time":
        message = (
            f"requests: this run's simulated time passed {now:,.0f} s ({idle:,.0f} s of it waiting "
            f"for arrivals), sampled every {sample_interval:g} s: {spent}, its cap; use faster "
            "hardware, a higher arrival rate or fewer requests, or run `manage.py engine`"
        )
    else:
        message = (
            f"requests are too many for a web request: this run needs {spent} (a unit is about "
            "one request in one engine step), its cap; use fewer requests or shorter prompts and "
            "outputs, or run `manage.py engine`"
        )
    return WorkBudgetExceeded("requests", message, cause, now, idle)


def _admit(pending: list[Request], arrived: int, now: float, replicas: list[Replica]) -> int:
    """Hand every request that has reached the scheduler by ``now`` to a replica; how many have."""
    while arrived < len(pending) and pending[arrived].arrival <= now:
        _choose_replica(replicas).waiting.append(pending[arrived])
        arrived += 1
    return arrived


def _replace(
    done: int,
    pending: list[Request],
    loop: ClosedLoop,
    sender: _Sender,
    shapes: list[TraceRequest],
    now: float,
) -> None:
    """A closed loop sends a request for each one done, until it has sent ``loop.requests``."""
    for _ in range(done):
        if len(pending) < loop.requests:
            pending.append(sender.request(len(pending), shapes[len(pending) % len(shapes)], now))


def _request_results(finished: list[Request]) -> list[RequestResult]:
    return [
        RequestResult(
            r.request_id,
            r.prompt_tokens,
            r.output_tokens,
            r.arrival if r.sent is None else r.sent,
            r.arrival if r.sent is None else r.sent,
            r.first_token if r.first_token is not None else math.nan,
            r.last_token if r.last_token is not None else math.nan,
            r.preemptions,
            r.cached_tokens,
        )
        for r in sorted(finished, key=lambda r: r.request_id)
    ]


def _priced(
    batches: list[list[Scheduled]],
    window: int | None,
    server: Server | None,
    pricer: StepPricer,
    lockstep_idle: bool,
) -> tuple[list[StepLoad], int, float]:
    """Each replica's load, the tokens of them all, and the step's seconds: the slowest
    replica's (an idle one counts where expert-parallel ranks step in lockstep)."""
    loads = [_load(batch, window, server) for batch in batches]
    group_tokens = sum(load.tokens for load in loads)
    seconds = max(
        pricer.step_seconds(load, group_tokens)
        for load, batch in zip(loads, batches, strict=True)
        if batch or lockstep_idle
    )
    return loads, group_tokens, seconds


def _result(
    pool: PoolSize,
    finished: list[Request],
    samples: list[Sample],
    steps: int,
    max_running: int,
    replicas: list[Replica],
    calibration: Calibration,
    counters: Counters,
    work: float,
    settings: EngineSettings,
) -> Result:
    result = Result(
        pool=pool,
        requests=_request_results(finished),
        timeseries=samples,
        steps=steps,
        max_running=max_running,
        preemptions=sum(r.preemptions for r in replicas),
        calibration=calibration,
        counters=counters,
        work=work,
    )
    result.summary = summarise(result.requests, pool.kv_tokens * settings.data_parallel, max_running)
    return result


def simulate(
    trace: Iterable[TraceRequest],
    model: ModelShape,
    hardware: Hardware,
    settings: EngineSettings = EngineSettings(),
    calibration: Calibration | None = None,
    closed_loop: ClosedLoop | None = None,
    sample_interval: float | None = 1.0,
    work_budget: float = MAX_WORK,
    server: Server | None = None,
) -> Result:
    """Run ``trace`` (open loop: each request at its arrival) or, with ``closed_loop``, the
    trace's sizes at a fixed concurrency. The timeseries is sampled every ``sample_interval``
    seconds of the run (None: no timeseries). The run stops with WorkBudgetExceeded once its steps
    and samples have cost ``work_budget`` work units (see STEP_WORK_UNITS): a bound on CPU time
    that is not a clock, checked inside the loop whatever the settings.

    Bad input is a ParamError naming the setting to change (``trace`` for the requests)."""
    _check_settings(model, hardware, settings, sample_interval)
    calibration = calibration or calibration_for(hardware)
    pool, pricer, replicas = _replicas(model, hardware, settings, calibration, server)
    sender = _Sender(server)
    shapes = sorted(trace, key=lambda t: t.arrival)
    pending = _first_requests(shapes, closed_loop, sender, pool.num_blocks * settings.block_size)
    window = model.sliding_window
    lockstep_idle = model.is_moe and settings.parallel.expert and settings.data_parallel > 1
    now = idle = work = 0.0  # idle: simulated seconds spent waiting for the next arrival
    arrived = steps = max_running = 0
    finished: list[Request] = []
    samples: list[Sample] = []
    next_sample = math.inf if sample_interval is None else sample_interval
    counters = Counters()
    # SGLang's poll for new requests (servers.py): the count of decode steps since the last one.
    recv_interval = server.recv_interval if server is not None else 1
    since_poll = recv_interval
    while True:
        if recv_interval == 1 or since_poll >= recv_interval:
            since_poll = 0
            arrived = _admit(pending, arrived, now, replicas)
        batches = [replica.schedule() for replica in replicas]
        if not any(batches):
            if arrived == len(pending) and all(not r.running and not r.waiting for r in replicas):
                break
            if arrived == len(pending):
                raise RuntimeError("the engine can schedule nothing and nothing is left to arrive")
            since_poll = recv_interval  # an idle engine polls at once
            arrival = pending[arrived].arrival
            if arrival > now:
                idle += arrival - now
                now = arrival
            continue
        loads, group_tokens, seconds = _priced(batches, window, server, pricer, lockstep_idle)
        now += seconds
        steps += 1
        if recv_interval > 1:
            decode_only = all(item.tokens == 1 for batch in batches for item in batch)
            since_poll += 1 if decode_only else recv_interval
        work += _step_work(batches, settings.block_size)
        found = FOUND_WORK_UNITS * sum(replica.pool.found for replica in replicas)
        if work + found + SAMPLE_WORK_UNITS * len(samples) > work_budget:
            raise _over_budget("steps", work_budget, now, idle, sample_interval)
        _count(counters, replicas, pricer, loads, group_tokens)
        for replica, batch in zip(replicas, batches, strict=True):
            done = replica.complete(batch, now)
            finished.extend(done)
            if closed_loop is not None:
                _replace(len(done), pending, closed_loop, sender, shapes, now)
        max_running = max(max_running, sum(len(r.running) for r in replicas))
        while next_sample <= now:
            if work + found + SAMPLE_WORK_UNITS * (len(samples) + 1) > work_budget:
                raise _over_budget("time", work_budget, now, idle, sample_interval)
            samples.append(_sample(next_sample, replicas))
            next_sample += sample_interval  # type: ignore[operator]
    return _result(
        pool, finished, samples, steps, max_running, replicas, calibration, counters, work, settings
    )


def _step_work(batches: list[list[Scheduled]], block_size: int) -> float:
    """A step's cost in work units: its own per replica, one a scheduled request, and the KV
    blocks its prompt tokens fill (each hashed and cached)."""
    blocks = sum(item.tokens for batch in batches for item in batch) / block_size
    items = sum(len(batch) for batch in batches)
    return STEP_WORK_UNITS * len(batches) + items + BLOCK_WORK_UNITS * blocks


def _count(
    counters: Counters, replicas: list[Replica], pricer: StepPricer, loads: list[StepLoad], group_tokens: int
) -> None:
    counters.steps += 1
    usage = max(r.pool.usage for r in replicas)
    counters.peak_kv_pct = max(counters.peak_kv_pct, round(100 * usage, 2))
    reasons = {r.stopped_by for r in replicas if r.waiting and r.stopped_by}
    for reason in reasons:
        counters.waiting_by[reason] = counters.waiting_by.get(reason, 0) + 1
    if not any(r.waiting for r in replicas):
        counters.unqueued_steps += 1
        busiest = max(loads, key=lambda load: load.tokens)
        if pricer.compute_bound(busiest, group_tokens):
            counters.compute_bound += 1


def _sample(t: float, replicas: list[Replica]) -> Sample:
    usage = sum(r.pool.usage for r in replicas) / len(replicas)
    return Sample(
        t,
        sum(len(r.running) for r in replicas),
        sum(len(r.waiting) for r in replicas),
        round(100 * usage, 2),
    )


def concurrency_sweep(
    levels: Iterable[int],
    sizes: list[TraceRequest],
    model: ModelShape,
    hardware: Hardware,
    settings: EngineSettings = EngineSettings(),
    requests_per_level: Callable[[int], int] = lambda c: max(12, 3 * c),
    work_budget: float = MAX_WORK,
    calibration: Calibration | None = None,
) -> list[dict[str, float]]:
    """Lesson 03's sweep on this engine: at each concurrency C a closed loop of
    ``requests_per_level(C)`` requests (the practice server's sweep sends max(12, 3 × C)), with
    lesson 03's metrics under its names: agg_tok_s (all output tokens ÷ the run's time),
    user_tok_s (the median over requests of 1 ÷ their TPOT), ttft_p50_ms and ttft_p95_ms
    (nearest rank). ``work_budget`` bounds the whole sweep's work, as ``simulate``'s does a run's."""
    found = []
    left = work_budget
    for level in levels:
        result = simulate(
            sizes,
            model,
            hardware,
            settings,
            calibration,
            closed_loop=ClosedLoop(level, requests_per_level(level)),
            sample_interval=None,  # its metrics need no timeseries
            work_budget=left,
        )
        left -= result.work
        requests = result.requests
        ttfts = [1000 * r.ttft for r in requests]
        speeds = sorted(1 / r.tpot for r in requests if r.tpot)
        wall = max(r.last_token_ts for r in requests)
        found.append(
            {
                "conc": level,
                "requests": len(requests),
                "agg_tok_s": sum(r.output_toks for r in requests) / wall,
                "user_tok_s": speeds[(len(speeds) - 1) // 2] if speeds else 0.0,
                "ttft_p50_ms": nearest_rank(ttfts, 50),
                "ttft_p95_ms": nearest_rank(ttfts, 95),
            }
        )
    return found

"""What one step of a serving engine costs on one GPU: the function every page and command times
a step with (the engine, step-time, decode-ceiling, roofline, prefill, the chain, continuous
batching).

A step runs a batch's tokens through the model once. Per GPU of a replica:

- **weights**: every dense weight once a step, whatever the batch; of a mixture of experts,
  every expert the step's tokens are routed to: of E experts with k a token, T tokens touch
  E × (1 − (1 − k/E)^T) on average;
- **compute**: 2 FLOP a weight a token (linear layers), and attention's 4 × heads × head size a
  query and context token (a prompt of P tokens attends to about P²/2 pairs: causal);
- **KV reads**: every sequence's KV cache for its context;
- the linear layers take the longer of their weights and their compute, attention the longer
  of its KV reads and its compute (the roofline, part by part); a product of M rows (the step's
  tokens) computes at the large product's FLOP/s times its measured share at M
  (:meth:`Calibration.matrix_share`), attention at its own kernel's FLOP/s;
- **link**: tensor parallelism's two all-reduces a layer, expert parallelism's all-gather and
  reduce-scatter around each MoE layer, each a ring: 2 (n − 1) or n − 1 steps, each step a
  latency and 1/n of the message over the link (NCCL's own model, src/graph/tuning.cc);
- **fixed**: each kernel's fixed cost, and the serving engine's own a step.

Achieved bandwidth, FLOP/s and the fixed costs come from a :class:`Calibration`
(felab_sim/engine/calibration.py reads them from measurements). :func:`step_cost` returns each
part in seconds; :func:`formulas` writes them with the numbers. Pure Python: no Django.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from .hardware import Hardware
from .model_shapes import AttentionKind, ModelShape, kv_bytes_per_token

# Kernels one transformer layer launches as vLLM runs it: the fused add-and-RMSNorm, the QKV
# product, rotary embedding, the KV-cache write, attention, the output product, the second fused
# add-and-RMSNorm, the gate-up product, SiLU-and-multiply and the down product (an MoE's grouped
# experts count as its MLP); each pays a kernel's fixed cost. Plus the output head once a step.
KERNELS_PER_LAYER = 10


@dataclass(frozen=True)
class Calibration:
    """What one GPU achieves, against its spec sheet, and the fixed costs of a step.

    ``source`` names the measurements each number comes from (docs/benchmarks.md, "Predicted
    from measurements")."""

    memory_efficiency: float  # achieved ÷ spec bandwidth when a kernel reads a weight matrix
    compute_efficiency: float  # achieved ÷ spec dense BF16 FLOP/s of a large matrix product
    fp8_compute_efficiency: float  # the same at FP8
    kernel_latency_s: float  # fixed cost of each kernel a step launches
    step_overhead_s: float  # the serving engine's own cost a step (scheduling, sampling)
    link_efficiency: float  # achieved ÷ spec interconnect bandwidth in a collective
    source: str = ""
    # A matrix product of M rows achieves less than the large product: (M, its FLOP/s ÷ the large
    # product's) at the rows where it is compute-bound, M ascending; between them by log M, below
    # the first its share, from the last up to the large product's rows (the last entry, share 1).
    matrix_rows: tuple[tuple[float, float], ...] = ()
    attention_efficiency: float = 1.0  # achieved ÷ spec BF16 FLOP/s of the attention kernel

    def flops(self, hardware: Hardware, bytes_per_param: float) -> float:
        """Achieved dense FLOP/s of a large matrix product at this weight precision."""
        peak = hardware.peak_flops(bytes_per_param)
        fp8 = bytes_per_param <= 1 and hardware.fp8_flops is not None
        return peak * (self.fp8_compute_efficiency if fp8 else self.compute_efficiency)

    def matrix_share(self, rows: float) -> float:
        """A product of ``rows`` rows' FLOP/s ÷ the large product's (1 without measured rows)."""
        table = self.matrix_rows
        if not table or rows >= table[-1][0]:
            return 1.0
        if rows <= table[0][0]:
            return table[0][1]
        for (m0, s0), (m1, s1) in itertools.pairwise(table):
            if rows <= m1:
                return s0 + (s1 - s0) * math.log(rows / m0) / math.log(m1 / m0)
        return 1.0

    def attention_flops(self, hardware: Hardware) -> float:
        """Achieved FLOP/s of attention's kernel (its products run in BF16 whatever the weights)."""
        return hardware.peak_flops(2.0) * self.attention_efficiency


# The spec sheet itself: every byte at the printed bandwidth, every FLOP at the printed peak,
# nothing fixed. The ceilings of decode-ceiling and roofline are steps at this calibration.
SPEC_SHEET = Calibration(
    memory_efficiency=1.0,
    compute_efficiency=1.0,
    fp8_compute_efficiency=1.0,
    kernel_latency_s=0.0,
    step_overhead_s=0.0,
    link_efficiency=1.0,
    source="the spec sheet: the ceiling, nothing achieved below it",
)


@dataclass(frozen=True)
class Parallelism:
    tensor: int = 1
    data: int = 1
    expert: bool = False  # vLLM's enable_expert_parallel: experts split over TP × DP GPUs

    @property
    def expert_group(self) -> int:
        return self.tensor * self.data if self.expert else 1


@dataclass(frozen=True)
class ModelCost:
    """A model's per-GPU numbers that do not change from step to step."""

    body_params: float  # dense weights a token goes through, this GPU's share, no embeddings
    head_params: float  # the output head, this GPU's share (run only for sampled tokens)
    expert_params_per_layer_local: float  # the routed experts one GPU holds, in one MoE layer
    expert_params: float  # one routed expert
    routed_experts: int
    experts_per_token: int
    moe_layers: int
    expert_shards: int  # GPUs one layer's experts are spread over
    bytes_per_param: float
    hidden_size: int
    layers: int
    attention_flops_per_token_context: float  # 4 × heads × head size × full layers, this GPU
    sliding_flops_per_token_context: float
    kv_full_bytes_per_token: float  # this GPU, full and MLA layers
    kv_sliding_bytes_per_token: float
    sliding_window: int | None
    input_table_params: float  # this GPU's share of the input embedding: a token reads one row
    resident_params: float  # everything this GPU holds: its dense share and its experts

    @property
    def weight_bytes_per_gpu(self) -> float:
        return self.resident_params * self.bytes_per_param


def model_cost(
    shape: ModelShape, bytes_per_param: float, kv_bytes_per_value: float, parallel: Parallelism
) -> ModelCost:
    tp = parallel.tensor
    table = shape.vocab_size * shape.hidden_size
    head = 0 if shape.tied_embeddings else table
    if shape.experts is not None:
        e = shape.experts
        all_experts = len(e.moe_layers) * e.routed_experts * shape.expert_params()
        routed, per_token, moe_layers = e.routed_experts, e.experts_per_token, len(e.moe_layers)
        one_expert = float(shape.expert_params())
    else:
        all_experts, routed, per_token, moe_layers, one_expert = 0, 1, 1, 0, 0.0
    shards = parallel.expert_group if parallel.expert else tp
    # The body: everything but the routed experts and the output head, the input table
    # included (a tied table is the head too, so the head adds nothing to memory then).
    body = (shape.total_params - all_experts - head) / tp
    heads_per_gpu = max(1, shape.attention_heads // tp)
    attention_width = heads_per_gpu * (shape.head_dim if shape.mla is None else shape.mla.v_head_dim)
    sliding_layers = shape.layers_of_kind(AttentionKind.SLIDING)
    full_layers = shape.layers - sliding_layers
    kv_by_kind = kv_bytes_per_token(shape, kv_bytes_per_value, tp)  # this GPU, by layer kind
    kv_sliding = kv_by_kind.get(AttentionKind.SLIDING, 0.0)
    return ModelCost(
        body_params=body,
        head_params=head / tp if head else table / tp,
        expert_params_per_layer_local=routed * one_expert / shards if moe_layers else 0.0,
        expert_params=one_expert,
        routed_experts=routed,
        experts_per_token=per_token,
        moe_layers=moe_layers,
        expert_shards=shards,
        bytes_per_param=bytes_per_param,
        hidden_size=shape.hidden_size,
        layers=shape.layers,
        attention_flops_per_token_context=4 * attention_width * full_layers,
        sliding_flops_per_token_context=4 * attention_width * sliding_layers,
        kv_full_bytes_per_token=sum(kv_by_kind.values()) - kv_sliding,
        kv_sliding_bytes_per_token=kv_sliding,
        sliding_window=shape.sliding_window,
        input_table_params=table / tp,
        resident_params=body + head / tp + (all_experts / shards if moe_layers else 0.0),
    )


def typed_cost(
    params: float, active_params: float, bytes_per_param: float, kv_bytes_per_token: float
) -> ModelCost:
    """A model known only by typed sizes: ``active_params`` read a token (no experts to route, no
    layers to count), ``kv_bytes_per_token`` read for each token of context."""
    return ModelCost(
        body_params=active_params,
        head_params=0.0,
        expert_params_per_layer_local=0.0,
        expert_params=0.0,
        routed_experts=1,
        experts_per_token=1,
        moe_layers=0,
        expert_shards=1,
        bytes_per_param=bytes_per_param,
        hidden_size=0,
        layers=0,
        attention_flops_per_token_context=0.0,
        sliding_flops_per_token_context=0.0,
        kv_full_bytes_per_token=kv_bytes_per_token,
        kv_sliding_bytes_per_token=0.0,
        sliding_window=None,
        input_table_params=0.0,
        resident_params=params,
    )


@dataclass(frozen=True)
class StepLoad:
    """One replica's batch in one step, reduced to what the cost needs."""

    tokens: int  # tokens computed this step
    sampled: int  # sequences that produce a token (the output head runs for these only)
    kv_read_tokens: int  # Σ context each sequence attends to (full layers)
    kv_read_sliding_tokens: int  # the same, capped at the sliding window
    attention_pairs: float  # Σ query tokens × context they attend (full layers)
    attention_sliding_pairs: float


def decode_load(batch: int, context: int, window: int | None = None) -> StepLoad:
    """One decode step of ``batch`` sequences, each attending to ``context`` tokens."""
    sliding = context if window is None else min(context, window)
    return StepLoad(batch, batch, batch * context, batch * sliding, batch * context, batch * sliding)


def prefill_load(prompt: int, window: int | None = None) -> StepLoad:
    """The prefill of one ``prompt``-token prompt in one step: causal, P (P + 1) / 2 pairs."""
    pairs = prompt * (prompt + 1) / 2
    if window is None or prompt <= window:
        return StepLoad(prompt, 1, prompt, prompt, pairs, pairs)
    sliding = window * (window + 1) / 2 + (prompt - window) * window
    return StepLoad(prompt, 1, prompt, window, pairs, sliding)


def combined(*loads: StepLoad) -> StepLoad:
    """Several sequences' work in one step (a mixed step: decodes beside a prompt's prefill)."""
    return StepLoad(
        sum(load.tokens for load in loads),
        sum(load.sampled for load in loads),
        sum(load.kv_read_tokens for load in loads),
        sum(load.kv_read_sliding_tokens for load in loads),
        sum(load.attention_pairs for load in loads),
        sum(load.attention_sliding_pairs for load in loads),
    )


@dataclass(frozen=True)
class StepCost:
    """One step's parts, in seconds on one GPU, and what they were computed from."""

    weight_bytes: float
    kv_bytes: float
    linear_flops: float
    attention_flops: float
    weights_s: float  # reading the weights
    linear_compute_s: float
    kv_s: float  # reading the KV cache
    attention_compute_s: float
    link_s: float
    fixed_s: float
    kernels: int
    bandwidth: float  # achieved, bytes/s
    flops: float  # achieved by the linear layers' products at this step's rows, FLOP/s
    attention_rate: float  # achieved by attention's kernel, FLOP/s
    experts_touched: float  # of one MoE layer's experts on this GPU (0 without experts)

    @property
    def compute_s(self) -> float:
        return self.linear_compute_s + self.attention_compute_s

    @property
    def seconds(self) -> float:
        return (
            max(self.weights_s, self.linear_compute_s)
            + max(self.kv_s, self.attention_compute_s)
            + self.link_s
            + self.fixed_s
        )

    @property
    def compute_bound(self) -> bool:
        """Whether the arithmetic takes longer than reading the weights and KV."""
        return self.compute_s > self.weights_s + self.kv_s

    def parts(self) -> dict[str, float]:
        """Each part's share of the step, in seconds: the roofline's winner per layer kind."""
        linear_compute = self.linear_compute_s if self.linear_compute_s > self.weights_s else 0.0
        attention_compute = self.attention_compute_s if self.attention_compute_s > self.kv_s else 0.0
        return {
            "weights": self.weights_s if not linear_compute else 0.0,
            "kv": self.kv_s if not attention_compute else 0.0,
            "compute": linear_compute + attention_compute,
            "link": self.link_s,
            "fixed": self.fixed_s,
        }

    @property
    def binds(self) -> str:
        """The part that takes longest: weights, kv, compute, link or fixed."""
        parts = self.parts()
        return max(parts, key=lambda name: parts[name])


def fixed_cost_s(cost: ModelCost, calibration: Calibration) -> float:
    """A step's fixed cost: each kernel's, and the serving engine's own."""
    return kernel_count(cost) * calibration.kernel_latency_s + calibration.step_overhead_s


def kernel_count(cost: ModelCost) -> int:
    return KERNELS_PER_LAYER * cost.layers + (1 if cost.layers else 0)


def ring_seconds(message_bytes: float, gpus: int, steps: int, link: float, latency: float) -> float:
    """One ring collective over ``gpus``: ``steps`` steps, each a latency and 1/n of the message."""
    return steps * (latency + message_bytes / gpus / link)


def step_cost(
    cost: ModelCost,
    hardware: Hardware,
    calibration: Calibration,
    load: StepLoad,
    parallel: Parallelism = Parallelism(),
    group_tokens: int | None = None,
) -> StepCost:
    """One step of ``load`` on one GPU of a replica. ``group_tokens``: the tokens of every
    replica of an expert-parallel group this step (their experts are shared); default, this
    replica's own."""
    group = load.tokens if group_tokens is None else group_tokens
    bandwidth = hardware.memory_bandwidth * calibration.memory_efficiency
    flops, attention_rate = compute_rates(
        calibration, hardware, calibration.flops(hardware, cost.bytes_per_param), load.tokens
    )
    parts = step_parts(cost, hardware, calibration, load, parallel, group, bandwidth, flops)
    weight_bytes, kv_bytes, linear_flops, attention_flops, link_s, fixed_s, touched = parts
    return StepCost(
        weight_bytes=weight_bytes,
        kv_bytes=kv_bytes,
        linear_flops=linear_flops,
        attention_flops=attention_flops,
        weights_s=weight_bytes / bandwidth,
        linear_compute_s=linear_flops / flops,
        kv_s=kv_bytes / bandwidth,
        attention_compute_s=attention_flops / attention_rate,
        link_s=link_s,
        fixed_s=fixed_s,
        kernels=kernel_count(cost),
        bandwidth=bandwidth,
        flops=flops,
        attention_rate=attention_rate,
        experts_touched=touched,
    )


def compute_rates(
    calibration: Calibration, hardware: Hardware, large: float, tokens: int
) -> tuple[float, float]:
    """The linear layers' FLOP/s (``large``, a large product's, at ``tokens`` rows) and attention's."""
    return large * calibration.matrix_share(tokens), calibration.attention_flops(hardware)


def step_parts(
    c: ModelCost,
    hardware: Hardware,
    cal: Calibration,
    load: StepLoad,
    parallel: Parallelism,
    group: int,
    bandwidth: float,
    flops: float,
) -> tuple[float, float, float, float, float, float, float]:
    """:func:`step_cost`'s arithmetic without its record (the engine prices thousands of steps a
    run): weight and KV bytes, linear and attention FLOPs, link and fixed seconds, experts
    touched."""
    body = c.body_params - c.input_table_params
    weight_params = body + c.head_params
    linear_flops = 2 * (body * load.tokens + c.head_params * load.sampled)
    touched = 0.0
    if c.moe_layers:
        expert_tokens = group if parallel.expert else load.tokens
        local = c.routed_experts / c.expert_shards
        touched = local * (1 - (1 - c.experts_per_token / c.routed_experts) ** expert_tokens)
        weight_params += c.moe_layers * touched * c.expert_params
        applications = expert_tokens * c.experts_per_token / c.expert_shards
        linear_flops += 2 * c.moe_layers * applications * c.expert_params
    attention_flops = (
        c.attention_flops_per_token_context * load.attention_pairs
        + c.sliding_flops_per_token_context * load.attention_sliding_pairs
    )
    kv_bytes = (
        c.kv_full_bytes_per_token * load.kv_read_tokens
        + c.kv_sliding_bytes_per_token * load.kv_read_sliding_tokens
    )
    link = (
        link_seconds(c, hardware, cal, load.tokens, group, parallel)
        if parallel.tensor > 1 or parallel.expert
        else 0.0
    )
    return (
        weight_params * c.bytes_per_param,
        kv_bytes,
        linear_flops,
        attention_flops,
        link,
        fixed_cost_s(c, cal),
        touched,
    )


def link_seconds(
    cost: ModelCost,
    hardware: Hardware,
    calibration: Calibration,
    tokens: int,
    group_tokens: int,
    parallel: Parallelism,
) -> float:
    """Tensor parallelism's all-reduces and expert parallelism's exchange, one step."""
    link = hardware.interconnect.bytes_per_s * calibration.link_efficiency
    latency = hardware.interconnect.step_latency_s
    seconds = 0.0
    tp = parallel.tensor
    if tp > 1 and tokens:
        activations = tokens * cost.hidden_size * 2
        all_reduce = ring_seconds(activations, tp, 2 * (tp - 1), link, latency)
        seconds += 2 * cost.layers * (hardware.interconnect.base_latency_s + all_reduce)
    ep = parallel.expert_group
    if cost.moe_layers and parallel.expert and ep > 1 and group_tokens:
        gathered = group_tokens * cost.hidden_size * 2
        one_way = hardware.interconnect.base_latency_s + ring_seconds(gathered, ep, ep - 1, link, latency)
        seconds += cost.moe_layers * 2 * one_way  # an all-gather, then a reduce-scatter
    return seconds

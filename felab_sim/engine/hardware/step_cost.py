"""What one step of a serving engine costs on one GPU: the function every page and command times
a step with (the engine, step-time, decode-ceiling, roofline, prefill, the chain, continuous
batching).

A step runs a batch's tokens through the model once. Per GPU of a replica:

- **weights**: every dense weight once a step, whatever the batch; of a mixture of experts,
  every expert the step's tokens are routed to: of E experts with k a token, T tokens touch
  E × (1 − (1 − k/E)^T) on average (uniform routing), each read once however many of the
  step's tokens it takes. Each weight at its format's bytes (``precisions.py``): FP8 with
  DeepSeek's 128 × 128 block scales adds 4 bytes a block; MXFP4 stores gpt-oss's experts at
  0.53125 bytes and keeps attention, router and tables in BF16. Under tensor parallelism MLA's
  down-projections (q_a, kv_a) and the router are held whole by every GPU (vLLM's
  ReplicatedLinear), the rest is split;
- **compute**: 2 FLOP a weight a token (linear layers), and attention's
  2 × (query-key width + value width) × heads a query and context token (4 × heads × head size for
  ordinary attention; a prompt of P tokens attends to about P²/2 pairs: causal). MLA attends two
  ways, as vLLM and SGLang run it: a prompt's tokens over keys and values expanded from the
  latent, 2 × (128 + 64 + 128) a head; a decoding token, its query absorbed into the latent, over
  the 576-value latent itself, 2 × (512 + 64) + 2 × 512 = 2,176 a head;
- **KV reads**: every sequence's KV cache for its context (MLA: the 576-value latent, whole on
  every GPU);
- the linear layers take the longer of their weights and their compute, attention the longer
  of its KV reads and its compute (the roofline, part by part); a product of M rows computes at
  the large product's FLOP/s times its measured share at M (:meth:`Calibration.matrix_share`):
  a dense product's M is the step's tokens, a grouped expert product's the tokens each touched
  expert takes, T × k ÷ the experts touched (under expert parallelism, the busiest GPU's), and
  a grouped product of 4-bit experts at a share of that (a factor fitted on published runs'
  TTFT, :attr:`Calibration.four_bit_grouped_share`, not a timed kernel); on a GPU without FP4
  tensor cores, unpacking 4-bit weights to BF16 runs on the ordinary cores while the tensor cores
  multiply them, so the longer of the unpacking and those weights' products counts;
  attention at its own kernel's FLOP/s;
- **link**: tensor parallelism's two all-reduces a layer, expert parallelism's all-gather and
  reduce-scatter around each MoE layer, each a ring: 2 (n − 1) or n − 1 steps, each step a
  latency and 1/n of the message over the link (NCCL's own model, src/graph/tuning.cc);
- **fixed**: each kernel's fixed cost, counted from the model's layers (``model_cost.py``'s
  :func:`layer_kernels`: matrix products at a matrix product's measured tail, the small kernels
  between them at theirs), and the serving engine's own a step.

The model's numbers that do not change from step to step are its :class:`ModelCost`
(``model_cost.py``), the step's batch its :class:`StepLoad` (``step_load.py``); this module prices
the one on the other. Achieved bandwidth, FLOP/s and the fixed costs come from a :class:`Calibration`
(felab_sim/engine/hardware/calibration.py reads them from measurements). :func:`step_cost` returns each
part in seconds; :func:`formulas` writes them with the numbers. Pure Python: no Django.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from .hardware import Hardware
from .model_cost import ModelCost, Parallelism, kernel_count, kernel_split
from .step_load import StepLoad


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
    # A small kernel's fixed cost (a norm, rotary, top-k, an activation's quantizing): None, a
    # matrix product's (kernel_latency_s).
    small_kernel_latency_s: float | None = None
    # 4-bit weights on a part without FP4 tensor cores: how many weights a second its ordinary
    # cores unpack and scale to BF16 (each weight once a step, the whole batch's rows sharing it);
    # None: not counted.
    dequant_weights_per_s: float | None = None
    # A grouped product of 4-bit (MXFP4) experts: its FLOP/s ÷ a BF16 product's of the same rows;
    # 1: as fast. A factor fitted on published runs' TTFT (calibration.py), standing for whatever
    # prefilling these experts costs that the rest of the step leaves out: no kernel was timed.
    four_bit_grouped_share: float = 1.0

    @property
    def small_kernel_s(self) -> float:
        return self.kernel_latency_s if self.small_kernel_latency_s is None else self.small_kernel_latency_s

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

    def grouped_share(self, rows: float, four_bit: bool) -> float:
        """A grouped expert product of ``rows`` rows an expert: its FLOP/s ÷ the large product's."""
        return self.matrix_share(rows) * (self.four_bit_grouped_share if four_bit else 1.0)

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


# No tensor, data or expert parallelism: a replica on one GPU.
ONE_GPU = Parallelism()


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
    grouped_flops: float = 0.0  # the grouped expert products' share of linear_flops
    expert_rows: float = 0.0  # rows a touched expert's product takes (tokens routed to it)
    grouped_rate: float = 0.0  # FLOP/s of a grouped expert product at those rows
    dequant_s: float = 0.0  # unpacking 4-bit weights to BF16, beside their products
    # Of dequant_s, what outlasts the products of those weights: the part in linear_compute_s.
    unpacking_beyond_s: float = 0.0
    unpacked_products_s: float = 0.0  # the products of the unpacked weights, which run meanwhile
    dequantized_weights: float = 0.0  # the weights unpacked

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
    """A step's fixed cost: each kernel's (a matrix product's tail, or a small kernel's), and the
    serving engine's own."""
    matrix, small = kernel_split(cost)
    return (
        matrix * calibration.kernel_latency_s
        + small * calibration.small_kernel_s
        + calibration.step_overhead_s
    )


def expert_rows(cost: ModelCost, expert_tokens: int, parallel: Parallelism) -> tuple[float, float, float]:
    """One MoE layer on this GPU: (experts touched, expert applications, rows a touched expert
    takes). Uniform routing: T tokens with k of E experts each touch E × (1 − (1 − k/E)^T) of them,
    T × k applications in all. Under expert parallelism each GPU holds E ÷ n experts and the
    busiest GPU sets the time: its applications are the mean T × k ÷ n plus the spread of a
    binomial count's largest of n, √(mean × (1 − 1/n) × 2 ln n)."""
    local = cost.routed_experts / cost.expert_shards
    share = 1 - (1 - cost.experts_per_token / cost.routed_experts) ** expert_tokens
    touched = local * share
    if parallel.expert and cost.expert_shards > 1:
        n = cost.expert_shards
        mean = expert_tokens * cost.experts_per_token / n
        applications = mean + math.sqrt(mean * (1 - 1 / n) * 2 * math.log(n))
        rows = applications / touched if touched else 0.0
    else:
        # Tensor parallelism: every GPU runs its slice of every touched expert, all the tokens.
        applications = expert_tokens * cost.experts_per_token / cost.expert_shards
        all_touched = cost.routed_experts * share
        rows = expert_tokens * cost.experts_per_token / all_touched if all_touched else 0.0
    return touched, applications, rows


def ring_seconds(message_bytes: float, gpus: int, steps: int, link: float, latency: float) -> float:
    """One ring collective over ``gpus``: ``steps`` steps, each a latency and 1/n of the message."""
    return steps * (latency + message_bytes / gpus / link)


def step_cost(
    cost: ModelCost,
    hardware: Hardware,
    calibration: Calibration,
    load: StepLoad,
    parallel: Parallelism = ONE_GPU,
    group_tokens: int | None = None,
) -> StepCost:
    """One step of ``load`` on one GPU of a replica. ``group_tokens``: the tokens of every
    replica of an expert-parallel group this step (their experts are shared); default, this
    replica's own."""
    group = load.tokens if group_tokens is None else group_tokens
    bandwidth = hardware.memory_bandwidth * calibration.memory_efficiency
    large = calibration.flops(hardware, cost.bytes_per_param)
    flops, attention_rate = compute_rates(calibration, hardware, large, load.tokens)
    parts = step_parts(cost, hardware, calibration, load, parallel, group, bandwidth, large)
    weight_bytes, kv_bytes, priced_flops, attention_flops, link_s, fixed_s, touched = parts
    rows = grouped = 0.0
    if cost.moe_layers:
        _, applications, rows = expert_rows(cost, group if parallel.expert else load.tokens, parallel)
        grouped = 2 * cost.moe_layers * applications * cost.expert_params
    # step_parts counts the grouped products at the step's rows' rate, and the unpacking of 4-bit
    # weights as tensor-core FLOPs: their own FLOPs and seconds here.
    grouped_share = calibration.grouped_share(rows, cost.four_bit)
    at_step_rate = calibration.matrix_share(load.tokens) / grouped_share if rows else 1.0
    unpacked = dequantized_weights(cost, hardware, calibration, touched)
    dequant_s = beyond = products_s = 0.0
    if unpacked and calibration.dequant_weights_per_s:
        dequant_s = unpacked / calibration.dequant_weights_per_s
        products = unpacked_products(cost, load.tokens, grouped * at_step_rate)
        beyond = unpacking_beyond(calibration, unpacked, flops, products)
        products_s = products / flops
    return StepCost(
        weight_bytes=weight_bytes,
        kv_bytes=kv_bytes,
        linear_flops=priced_flops - grouped * at_step_rate + grouped - beyond,
        attention_flops=attention_flops,
        weights_s=weight_bytes / bandwidth,
        linear_compute_s=priced_flops / flops,
        kv_s=kv_bytes / bandwidth,
        attention_compute_s=attention_flops / attention_rate,
        link_s=link_s,
        fixed_s=fixed_s,
        kernels=kernel_count(cost),
        bandwidth=bandwidth,
        flops=flops,
        attention_rate=attention_rate,
        experts_touched=touched,
        grouped_flops=grouped,
        expert_rows=rows,
        grouped_rate=flops / calibration.matrix_share(load.tokens) * grouped_share if rows else 0.0,
        dequant_s=dequant_s,
        dequantized_weights=unpacked,
        unpacking_beyond_s=beyond / flops,
        unpacked_products_s=products_s,
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
    """``flops``: a large product's FLOP/s at the weights' precision.
    :func:`step_cost`'s arithmetic without its record (the engine prices thousands of steps a
    run): weight and KV bytes, linear and attention FLOPs, link and fixed seconds, experts
    touched."""
    body = c.body_params - c.input_table_params
    weight_bytes = body * (c.bytes_per_param + c.scale_bytes_per_param) + c.head_params * c.head_bytes
    linear_flops = 2 * (body * load.tokens + c.head_params * load.sampled)
    touched = grouped_priced = 0.0
    if c.moe_layers:
        expert_tokens = group if parallel.expert else load.tokens
        touched, applications, rows = expert_rows(c, expert_tokens, parallel)
        weight_bytes += c.moe_layers * touched * c.expert_params * c.expert_bytes
        # The grouped products run at their own rows' rate: counted here at the step's rows' rate
        # (what the caller divides by), scaled by the two rates' ratio.
        grouped = 2 * c.moe_layers * applications * c.expert_params
        grouped_priced = (
            grouped * cal.matrix_share(load.tokens) / cal.grouped_share(rows, c.four_bit) if rows else grouped
        )
        linear_flops += grouped_priced
    dequantized = dequantized_weights(c, hardware, cal, touched)
    if dequantized:
        products = unpacked_products(c, load.tokens, grouped_priced)
        linear_flops += unpacking_beyond(cal, dequantized, flops * cal.matrix_share(load.tokens), products)
    decode_flops = c.decode_attention_flops_per_token_context
    if decode_flops is None:
        decode_flops = c.attention_flops_per_token_context
    attention_flops = (
        c.attention_flops_per_token_context * (load.attention_pairs - load.decode_pairs)
        + decode_flops * load.decode_pairs
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
        weight_bytes,
        kv_bytes,
        linear_flops,
        attention_flops,
        link,
        fixed_cost_s(c, cal),
        touched,
    )


def unpacked_products(cost: ModelCost, tokens: int, grouped_priced: float) -> float:
    """The FLOPs, at the step's rate, of the products whose 4-bit weights a step unpacks: the
    grouped expert products (``grouped_priced``) or, for a dense model, its body's."""
    if cost.moe_layers:
        return grouped_priced
    return 2 * (cost.body_params - cost.input_table_params) * tokens


def unpacking_beyond(calibration: Calibration, unpacked: float, step_flops: float, products: float) -> float:
    """Unpacking ``unpacked`` 4-bit weights, as the FLOPs the tensor cores would do meanwhile at the
    step's rate (``step_flops``), beyond ``products`` (:func:`unpacked_products`): the ordinary
    cores unpack while the tensor cores multiply, so the longer of the two binds, not their sum."""
    assert calibration.dequant_weights_per_s is not None
    unpacking = unpacked / calibration.dequant_weights_per_s * step_flops
    return max(0.0, unpacking - products)


def dequantized_weights(
    cost: ModelCost, hardware: Hardware, calibration: Calibration, touched: float
) -> float:
    """4-bit weights a step unpacks to BF16 on a part without FP4 tensor cores: every expert it
    reads (a dense model: its body), once; 0 where the part multiplies them as they are."""
    if not cost.four_bit or hardware.native_fp4 or calibration.dequant_weights_per_s is None:
        return 0.0
    if cost.moe_layers:
        return cost.moe_layers * touched * cost.expert_params
    return cost.body_params - cost.input_table_params


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

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
  expert takes, T × k ÷ the experts touched (under expert parallelism, the busiest GPU's);
  attention at its own kernel's FLOP/s;
- **link**: tensor parallelism's two all-reduces a layer, expert parallelism's all-gather and
  reduce-scatter around each MoE layer, each a ring: 2 (n − 1) or n − 1 steps, each step a
  latency and 1/n of the message over the link (NCCL's own model, src/graph/tuning.cc);
- **fixed**: each kernel's fixed cost, counted from the model's layers (:func:`layer_kernels`:
  matrix products at a matrix product's measured tail, the small kernels between them at theirs),
  and the serving engine's own a step.

Achieved bandwidth, FLOP/s and the fixed costs come from a :class:`Calibration`
(felab_sim/engine/hardware/calibration.py reads them from measurements). :func:`step_cost` returns each
part in seconds; :func:`formulas` writes them with the numbers. Pure Python: no Django.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ..models.model_kv_cache import kv_bytes_per_token
from ..models.model_shapes import AttentionKind, LatentAttention, ModelShape
from ..models.precisions import BF16_BYTES, FP8_BYTES, scale_bytes_per_weight, weight_format
from .hardware import Hardware

# Kernels one dense transformer layer launches as vLLM runs it: the fused add-and-RMSNorm, the QKV
# product, rotary embedding, the KV-cache write, attention, the output product, the second fused
# add-and-RMSNorm, the gate-up product, SiLU-and-multiply and the down product: 4 matrix products
# and 6 small kernels. Plus the output head once a step. layer_kernels counts the other kinds.
KERNELS_PER_LAYER = 10
DENSE_MATRIX_KERNELS, DENSE_SMALL_KERNELS = 4, 6


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
    # Bytes a weight where the format stores parts apart (precisions.py); None: bytes_per_param.
    expert_bytes_per_param: float | None = None  # a routed expert's matrices
    head_bytes_per_param: float | None = None  # the output head and the input table
    resident_bytes: float | None = None  # everything this GPU holds, each part at its bytes
    matrix_kernels: int | None = None  # a step's matrix products (None: KERNELS_PER_LAYER's 4 a layer)
    small_kernels: int | None = None  # a step's small kernels (None: 6 a layer)
    four_bit: bool = False  # the converted matrices are 4-bit (MXFP4): unpacked to BF16 without FP4 cores
    scale_bytes_per_param: float = 0.0  # block scales a body weight carries besides bytes_per_param
    # A decoding token's attention FLOPs a context token, full layers (None: the same as a
    # prompt's): MLA's absorbed form over the latent.
    decode_attention_flops_per_token_context: float | None = None

    @property
    def weight_bytes_per_gpu(self) -> float:
        if self.resident_bytes is not None:
            return self.resident_bytes
        return self.resident_params * self.bytes_per_param

    @property
    def expert_bytes(self) -> float:
        return self.bytes_per_param if self.expert_bytes_per_param is None else self.expert_bytes_per_param

    @property
    def head_bytes(self) -> float:
        return self.bytes_per_param if self.head_bytes_per_param is None else self.head_bytes_per_param


def replicated_params(shape: ModelShape) -> float:
    """Weights every tensor-parallel GPU holds whole: MLA's down-projections of the hidden state
    (q_a and kv_a with the rotary key: vLLM's DeepSeek attention builds them as ReplicatedLinear,
    their outputs are too narrow to split) and each MoE layer's router (ReplicatedLinear too)."""
    found = 0.0
    if shape.mla is not None:
        m = shape.mla
        down = shape.hidden_size * ((m.q_lora_rank or 0) + m.kv_lora_rank + m.qk_rope_head_dim)
        found += shape.layers * down
    if shape.experts is not None:
        found += len(shape.experts.moe_layers) * shape.hidden_size * shape.experts.routed_experts
    return found


def layer_kernels(shape: ModelShape, block_scaled: bool) -> tuple[int, int]:
    """A step's kernels as vLLM and SGLang launch them for this model: (matrix products, small
    kernels), the output head's product included.

    A dense layer: 4 products (QKV, output, gate-up, down) and 6 small kernels (two add-norms,
    rotary, the cache write, attention, the activation). MLA's attention in place of QKV: the
    fused q_a/kv_a down-projection, q_b, and the absorbed key and value up-projections (two
    batched products), so 4 more products less the QKV one, and its q_a and kv_a norms (+2 small;
    +1 without a q_a). A MoE layer's MLP: the router's product and the two grouped expert
    products (+1 product), top-k, the sort of tokens by expert and the weighted sum (+3 small);
    shared experts add their gate-up and down products and activation. FP8 with block scales: one
    more small kernel before each FP8 product, quantizing its input per group of 128 (the absorbed
    up-projections and the router run in BF16)."""
    matrix, small = 0, 0
    moe = set(shape.experts.moe_layers) if shape.experts is not None else set()
    for index in range(shape.layers):
        layer_matrix, layer_small = DENSE_MATRIX_KERNELS, DENSE_SMALL_KERNELS
        quantized = 4  # QKV, output, gate-up, down
        if shape.mla is not None:
            layer_matrix += 3  # fused down-projection, q_b, two absorbed up-projections; no QKV
            layer_small += 2 if shape.mla.q_lora_rank else 1
            quantized += 1 if shape.mla.q_lora_rank else 0
        if index in moe:
            assert shape.experts is not None
            layer_matrix += 1
            layer_small += 3
            if shape.experts.shared_experts:
                layer_matrix += 2
                layer_small += 1
                quantized += 2
        matrix += layer_matrix
        small += layer_small + (quantized if block_scaled else 0)
    return matrix + 1, small


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
    # The format: which parts are converted and at what bytes a weight, scales included.
    form = weight_format(bytes_per_param)
    scaled = scale_bytes_per_weight(form, shape.weight_block)
    matrix_bytes = form.matrix_bytes + scaled
    experts_only = form.experts_only and moe_layers > 0
    # bytes_per_param stays the format's own (it picks the tensor cores' peak); scales apart.
    body_bytes = BF16_BYTES if experts_only else form.matrix_bytes
    body_scale = 0.0 if experts_only else scaled
    table_bytes = BF16_BYTES if form.tables_bf16 else matrix_bytes
    # The body: everything but the routed experts and the output head, the input table
    # included (a tied table is the head too, so the head adds nothing to memory then); the
    # replicated weights whole on every GPU, the rest split.
    whole = replicated_params(shape) if tp > 1 else 0.0
    body = (shape.total_params - all_experts - head - whole) / tp + whole
    heads_per_gpu = max(1, shape.attention_heads // tp)
    decode_pair_flops = None
    if shape.mla is None:
        pair_flops = 4 * shape.head_dim
    else:
        m = shape.mla
        pair_flops = mla_prefill_pair_flops(m)
        decode_pair_flops = mla_decode_pair_flops(m)
    sliding_layers = shape.layers_of_kind(AttentionKind.SLIDING)
    full_layers = shape.layers - sliding_layers
    kv_by_kind = kv_bytes_per_token(shape, kv_bytes_per_value, tp)  # this GPU, by layer kind
    kv_sliding = kv_by_kind.get(AttentionKind.SLIDING, 0.0)
    matrix_kernels, small_kernels = layer_kernels(shape, block_scaled=scaled > 0)
    local_experts = all_experts / shards if moe_layers else 0.0
    # The tables: the input table sits in the body at the body's bytes when it is the head too.
    return ModelCost(
        body_params=body,
        head_params=head / tp if head else table / tp,
        expert_params_per_layer_local=routed * one_expert / shards if moe_layers else 0.0,
        expert_params=one_expert,
        routed_experts=routed,
        experts_per_token=per_token,
        moe_layers=moe_layers,
        expert_shards=shards,
        bytes_per_param=body_bytes,
        hidden_size=shape.hidden_size,
        layers=shape.layers,
        attention_flops_per_token_context=pair_flops * heads_per_gpu * full_layers,
        sliding_flops_per_token_context=pair_flops * heads_per_gpu * sliding_layers,
        kv_full_bytes_per_token=sum(kv_by_kind.values()) - kv_sliding,
        kv_sliding_bytes_per_token=kv_sliding,
        sliding_window=shape.sliding_window,
        input_table_params=table / tp,
        resident_params=body + head / tp + local_experts,
        expert_bytes_per_param=matrix_bytes,
        head_bytes_per_param=table_bytes,
        resident_bytes=(body - table / tp) * (body_bytes + body_scale)
        + (table + head) / tp * table_bytes
        + local_experts * matrix_bytes,
        matrix_kernels=matrix_kernels if shape.layers else 0,
        small_kernels=small_kernels if shape.layers else 0,
        four_bit=form.matrix_bytes < FP8_BYTES,
        scale_bytes_per_param=body_scale,
        decode_attention_flops_per_token_context=None
        if decode_pair_flops is None
        else decode_pair_flops * heads_per_gpu * full_layers,
    )


# MLA's two forms, as the engines choose them. vLLM (vllm/v1/attention/backends/mla/common.py at
# 00a817ad, its docstring and split_decodes_and_prefills): a request with one query token is a
# decode and runs the "data-movement friendly" form, the query absorbed through W_UK into the
# latent, multi-query attention with query-key width kv_lora_rank + rope (576 for DeepSeek-V3) and
# value width kv_lora_rank (512); prefills, chunked ones included, run the "compute friendly" form,
# multi-head attention over keys and values expanded from the latent, widths nope + rope (192) and
# v_head_dim (128). SGLang (python/sglang/srt/models/deepseek_v2.py, _handle_attention_backend)
# sends decodes to its MLA (absorbed) kernels too; it runs an extend as MHA only when that pays (no
# cached prefix, or a long one: 8,192 tokens or more summed), else absorbed. felab prices every prompt
# token expanded: the runs it is checked on have prefix caching off, so a chunk's cached prefix is
# the request's own earlier chunks, whose re-expansion through W_UK and W_UV it does not count.
def mla_prefill_pair_flops(m: LatentAttention) -> int:
    """A prompt token's FLOPs a head a context token: QKᵀ at 2 × (nope + rope), PV at 2 × v."""
    return 2 * (m.qk_nope_head_dim + m.qk_rope_head_dim) + 2 * m.v_head_dim


def mla_decode_pair_flops(m: LatentAttention) -> int:
    """A decoding token's, absorbed: QKᵀ at 2 × (latent + rope), PV at 2 × latent."""
    return 2 * (m.kv_lora_rank + m.qk_rope_head_dim) + 2 * m.kv_lora_rank


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
    # Of attention_pairs, those of sequences decoding one token (MLA prices them absorbed).
    decode_pairs: float = 0.0


def decode_load(batch: int, context: int, window: int | None = None) -> StepLoad:
    """One decode step of ``batch`` sequences, each attending to ``context`` tokens."""
    sliding = context if window is None else min(context, window)
    return StepLoad(
        batch, batch, batch * context, batch * sliding, batch * context, batch * sliding, batch * context
    )


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
        sum(load.decode_pairs for load in loads),
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
    grouped_flops: float = 0.0  # the grouped expert products' share of linear_flops
    expert_rows: float = 0.0  # rows a touched expert's product takes (tokens routed to it)
    grouped_rate: float = 0.0  # FLOP/s of a grouped expert product at those rows
    dequant_s: float = 0.0  # unpacking 4-bit weights to BF16 (part of linear_compute_s)
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


def kernel_split(cost: ModelCost) -> tuple[int, int]:
    """A step's (matrix products, small kernels)."""
    if cost.matrix_kernels is not None and cost.small_kernels is not None:
        return cost.matrix_kernels, cost.small_kernels
    if not cost.layers:
        return 0, 0
    return DENSE_MATRIX_KERNELS * cost.layers + 1, DENSE_SMALL_KERNELS * cost.layers


def kernel_count(cost: ModelCost) -> int:
    return sum(kernel_split(cost))


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
    parallel: Parallelism = Parallelism(),
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
    at_step_rate = calibration.matrix_share(load.tokens) / calibration.matrix_share(rows) if rows else 1.0
    unpacked = dequantized_weights(cost, hardware, calibration, touched)
    dequant_s = (
        unpacked / calibration.dequant_weights_per_s
        if unpacked and calibration.dequant_weights_per_s
        else 0.0
    )
    return StepCost(
        weight_bytes=weight_bytes,
        kv_bytes=kv_bytes,
        linear_flops=priced_flops - grouped * at_step_rate + grouped - dequant_s * flops,
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
        grouped_rate=flops / calibration.matrix_share(load.tokens) * calibration.matrix_share(rows)
        if rows
        else 0.0,
        dequant_s=dequant_s,
        dequantized_weights=unpacked,
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
    touched = 0.0
    if c.moe_layers:
        expert_tokens = group if parallel.expert else load.tokens
        touched, applications, rows = expert_rows(c, expert_tokens, parallel)
        weight_bytes += c.moe_layers * touched * c.expert_params * c.expert_bytes
        # The grouped products run at their own rows' rate: counted here at the step's rows' rate
        # (what the caller divides by), scaled by the two rates' ratio.
        grouped = 2 * c.moe_layers * applications * c.expert_params
        linear_flops += grouped * cal.matrix_share(load.tokens) / cal.matrix_share(rows) if rows else grouped
    dequantized = dequantized_weights(c, hardware, cal, touched)
    if dequantized:
        # The ordinary cores' unpacking, priced as the FLOPs the tensor cores would do meanwhile.
        assert cal.dequant_weights_per_s is not None
        linear_flops += dequantized / cal.dequant_weights_per_s * flops * cal.matrix_share(load.tokens)
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

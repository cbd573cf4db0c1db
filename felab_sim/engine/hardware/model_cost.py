"""A model's cost on one GPU of a replica, the numbers that do not change from step to step
(:func:`model_cost`, under a :class:`Parallelism`; :func:`typed_cost` for a model known only by
typed sizes): its weights' shares and bytes a weight in their format, the attention FLOPs and KV
bytes a token of context costs, MLA's two forms, and the kernels a step launches
(:func:`layer_kernels`). ``step_cost.py`` prices a step from them. Pure Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models.model_kv_cache import kv_bytes_per_token
from ..models.model_shapes import AttentionKind, LatentAttention, ModelShape
from ..models.precisions import BF16_BYTES, FP8_BYTES, scale_bytes_per_weight, weight_format

# Kernels one dense transformer layer launches as vLLM runs it: the fused add-and-RMSNorm, the QKV
# product, rotary embedding, the KV-cache write, attention, the output product, the second fused
# add-and-RMSNorm, the gate-up product, SiLU-and-multiply and the down product: 4 matrix products
# and 6 small kernels. Plus the output head once a step. layer_kernels counts the other kinds.
KERNELS_PER_LAYER = 10
DENSE_MATRIX_KERNELS, DENSE_SMALL_KERNELS = 4, 6


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


def kernel_split(cost: ModelCost) -> tuple[int, int]:
    """A step's (matrix products, small kernels)."""
    if cost.matrix_kernels is not None and cost.small_kernels is not None:
        return cost.matrix_kernels, cost.small_kernels
    if not cost.layers:
        return 0, 0
    return DENSE_MATRIX_KERNELS * cost.layers + 1, DENSE_SMALL_KERNELS * cost.layers


def kernel_count(cost: ModelCost) -> int:
    return sum(kernel_split(cost))

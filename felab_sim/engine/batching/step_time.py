"""What one engine step costs on the hardware: a roofline per part of the forward pass.

A step runs the batch's tokens through the model once. Per GPU:

- linear layers: max(FLOPs ÷ (peak × compute efficiency), weight bytes ÷ (bandwidth × memory
  efficiency)), the weights read once a step whatever the batch; a mixture of experts reads only
  the experts the step's tokens are routed to: of E experts with k a token, T tokens touch
  E × (1 − (1 − k/E)^T) of them on average;
- attention: max(its FLOPs, every sequence's KV read for its context) on the same two roofs;
- tensor parallelism: two all-reduces a layer of the step's activations, ring-style;
- expert parallelism: the tokens' exchange around each MoE layer (all-gather then
  reduce-scatter, vLLM's ``allgather_reducescatter`` backend);
- a fixed overhead a step (scheduling, sampling, launch gaps), fitted per hardware.

The fitted numbers are those of ``Calibration``: memory and compute efficiency and the overhead
per hardware, and where a multi-GPU run exists the link's efficiency; a collective's fixed cost
is stated, not fitted. Attention FLOPs are counted as 4 × heads × head size per query and
context token (QKᵀ and PV); for MLA layers with the value head size, without modelling the
absorbed-latent kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware import Hardware
from ..model_shapes import AttentionKind, ModelShape, kv_bytes_per_token


@dataclass(frozen=True)
class Calibration:
    """The fitted numbers of one hardware (docs/benchmarks.md, "The continuous-batching engine")."""

    memory_efficiency: float  # share of the spec-sheet bandwidth a step's reads achieve
    compute_efficiency: float  # share of the dense peak the matrix multiplies achieve
    step_overhead_s: float  # a step's fixed cost
    # One collective's fixed cost on the link (all-reduce, all-gather, reduce-scatter), which
    # dominates the small messages of a decode step. Fitted where a multi-GPU run exists.
    collective_latency_s: float = 10e-6
    link_efficiency: float = 1.0  # share of the interconnect's spec bandwidth a collective gets
    fitted_on: str = ""


# Fitted by hand on LLMServingSim's anchor runs (bench/bench_engine.py prints the fit): a grid
# over memory efficiency {0.7 … 0.9}, compute efficiency {0.45 … 0.9} and overhead {2, 4} ms,
# keeping the point whose worst error (each metric over its target: TTFT 20%, the rest 10%) is
# smallest. The RTX PRO 6000's link efficiency was then fitted alone on its one multi-GPU run
# (Qwen3-30B-A3B, data parallel 2 with expert parallelism) over {0.05, 0.1} with the others held.
CALIBRATIONS: dict[str, Calibration] = {
    "rtx-4090": Calibration(
        memory_efficiency=0.90,
        compute_efficiency=0.75,
        step_overhead_s=0.002,
        fitted_on="LLMServingSim RTX4090/Llama-3.1-8B",
    ),
    "rtx-pro-6000": Calibration(
        memory_efficiency=0.80,
        compute_efficiency=0.60,
        step_overhead_s=0.004,
        link_efficiency=0.10,
        fitted_on="LLMServingSim RTXPRO6000/Llama-3.1-8B (the first three), "
        "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507 (link efficiency)",
    ),
}
# Hardware with no anchor run: the two fitted GPUs' numbers, in between; a guess, said so.
DEFAULT_CALIBRATION = Calibration(
    memory_efficiency=0.85,
    compute_efficiency=0.65,
    step_overhead_s=0.003,
    link_efficiency=0.5,
    fitted_on="no anchor run: between the RTX 4090's and the RTX PRO 6000's fits, not measured",
)


def calibration_for(hardware_name: str) -> Calibration:
    return CALIBRATIONS.get(hardware_name, DEFAULT_CALIBRATION)


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


@dataclass(frozen=True)
class StepLoad:
    """One replica's batch in one step, reduced to what the cost needs."""

    tokens: int  # tokens computed this step
    sampled: int  # sequences that produce a token (the output head runs for these only)
    kv_read_tokens: int  # Σ context each sequence attends to (full layers)
    kv_read_sliding_tokens: int  # the same, capped at the sliding window
    attention_pairs: float  # Σ query tokens × context they attend (full layers)
    attention_sliding_pairs: float


@dataclass(frozen=True)
class StepPricer:
    cost: ModelCost
    hardware: Hardware
    calibration: Calibration
    parallel: Parallelism

    def _rooflines(self, load: StepLoad, group_tokens: int) -> tuple[float, float, float, float]:
        """Seconds for the linear layers' compute and memory, then attention's compute and memory."""
        c, cal, hw = self.cost, self.calibration, self.hardware
        bandwidth = hw.memory_bandwidth * cal.memory_efficiency
        compute = hw.peak_flops(c.bytes_per_param) * cal.compute_efficiency
        body = c.body_params - c.input_table_params
        weight_params = body + c.head_params
        linear_flops = 2 * (body * load.tokens + c.head_params * load.sampled)
        if c.moe_layers:
            expert_tokens = group_tokens if self.parallel.expert else load.tokens
            local = c.routed_experts / c.expert_shards
            touched = 1 - (1 - c.experts_per_token / c.routed_experts) ** expert_tokens
            weight_params += c.moe_layers * local * touched * c.expert_params
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
        return (
            linear_flops / compute,
            weight_params * c.bytes_per_param / bandwidth,
            attention_flops / compute,
            kv_bytes / bandwidth,
        )

    def gpu_seconds(self, load: StepLoad, group_tokens: int) -> float:
        """Linear roofline + attention roofline for one GPU of this replica."""
        linear_compute, linear_memory, attention_compute, attention_memory = self._rooflines(
            load, group_tokens
        )
        return max(linear_compute, linear_memory) + max(attention_compute, attention_memory)

    def compute_bound(self, load: StepLoad, group_tokens: int) -> bool:
        """Whether this step's arithmetic takes longer than its reads of weights and KV."""
        linear_compute, linear_memory, attention_compute, attention_memory = self._rooflines(
            load, group_tokens
        )
        return linear_compute + attention_compute > linear_memory + attention_memory

    def communication_seconds(self, load: StepLoad, group_tokens: int) -> float:
        c = self.cost
        link = self.hardware.interconnect.bytes_per_s * self.calibration.link_efficiency
        seconds = 0.0
        tp = self.parallel.tensor
        if tp > 1:
            activations = load.tokens * c.hidden_size * 2
            per_reduce = 2 * (tp - 1) / tp * activations / link + self.calibration.collective_latency_s
            seconds += 2 * c.layers * per_reduce
        ep = self.parallel.expert_group
        if c.moe_layers and self.parallel.expert and ep > 1:
            gathered = (ep - 1) / ep * group_tokens * c.hidden_size * 2
            seconds += c.moe_layers * 2 * (gathered / link + self.calibration.collective_latency_s)
        return seconds

    def step_seconds(self, load: StepLoad, group_tokens: int) -> float:
        return (
            self.gpu_seconds(load, group_tokens)
            + self.communication_seconds(load, group_tokens)
            + self.calibration.step_overhead_s
        )

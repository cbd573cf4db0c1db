"""Which setting a refused engine run is for: the one a student can change to make it run.

The simulation refuses in its own terms (a run over its work cap, a pool without one KV block);
here each refusal is put on the setting that causes it, in words that say what would fix it:

- a run over the web's work cap is ``max_num_seqs``'s when that cap alone forces more engine
  steps than the web simulates (each step decodes at most ``max_num_seqs`` requests), and
  ``max_num_batched_tokens``'s when the prompts alone do (each step prefills at most that many
  tokens); else it is the workload's size, ``requests``;
- a pool without one KV block is ``gpu_memory_utilization``'s only when some utilization would
  leave one; when even all of the memory would not, no value of it can, and the refusal is the
  model's, naming what can: a GPU with more memory, more tensor parallelism, a smaller model.

Pure Python, no Django.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..core.calculator import counted
from ..core.params import ParamError, ParamValue
from .kv_pool import block_cost
from .simulate import STEP_WORK_UNITS, WorkBudgetExceeded
from .step_time import Parallelism, model_cost

# Tensor-parallel sizes the engine page offers (engine_params.py: 1 to 8).
TP_CHOICES = (2, 4, 8)


def _sizes(inputs) -> tuple[int, int, int]:
    """Requests, their output tokens and their prompt tokens, all together."""
    if inputs.closed_loop is not None:
        requests = inputs.closed_loop.requests
        size = inputs.trace[0]
        return requests, requests * size.output_tokens, requests * size.prompt_tokens
    trace = inputs.trace
    return len(trace), sum(t.output_tokens for t in trace), sum(t.prompt_tokens for t in trace)


def over_work_cap(error: WorkBudgetExceeded, inputs, work_cap: float) -> ParamError:
    """A run over the web's work cap, put on the setting that forces the work."""
    settings = inputs.settings
    replicas = settings.data_parallel
    requests, outputs, prompts = _sizes(inputs)
    seqs, budget = settings.max_num_seqs, settings.max_num_batched_tokens
    per_replica = math.ceil(requests / replicas)
    longest_prompt = max(t.prompt_tokens for t in inputs.trace)

    # The least work each setting forces: every step costs its own units on each replica, and
    # each request scheduled in it one more (a decode token, or a chunk of a prompt).
    def decode_work(at_once: int) -> float:
        steps = math.ceil(math.ceil(outputs / replicas) / at_once)
        return STEP_WORK_UNITS * replicas * steps + outputs

    def prefill_work(tokens: int) -> float:
        steps = math.ceil(math.ceil(prompts / replicas) / tokens)
        return STEP_WORK_UNITS * replicas * steps + requests * math.ceil(prompts / requests / tokens)

    decode_steps = math.ceil(math.ceil(outputs / replicas) / seqs)
    prefill_steps = math.ceil(math.ceil(prompts / replicas) / budget)
    # A setting is the cause when its value forces more than the cap and the value that lets
    # every request in at once (or every prompt in whole) would not.
    seqs_cause = decode_work(seqs) > work_cap >= decode_work(max(seqs, per_replica))
    budget_cause = prefill_work(budget) > work_cap >= prefill_work(max(budget, longest_prompt))
    cap = f"{work_cap:,.0f}"
    on_each = f" on each of {replicas} replicas" if replicas > 1 else ""
    if budget_cause and (not seqs_cause or prefill_work(budget) >= decode_work(seqs)):
        return ParamError(
            "max_num_batched_tokens",
            f"max_num_batched_tokens: at {counted(budget, 'token')} a step{on_each}, the prompts alone "
            f"({requests:,} requests, {prompts:,} prompt tokens) take at least {prefill_steps:,} "
            f"engine steps, more than a web request simulates ({cap} units of work); raise "
            "max_num_batched_tokens, or use fewer requests or shorter prompts, or run `manage.py engine`",
        )
    if seqs_cause:
        return ParamError(
            "max_num_seqs",
            f"max_num_seqs: at most {counted(seqs, 'request')} decode{'s' if seqs == 1 else ''} in a "
            f"step{on_each}, so {counted(requests, 'request')}' {outputs:,} output tokens take at least {decode_steps:,} engine steps, "
            f"more than a web request simulates ({cap} units of work); raise max_num_seqs, or use "
            "fewer requests or output tokens, or run `manage.py engine`",
        )
    return ParamError(error.param, error.message)


def _gb(value: float) -> str:
    return f"{value / 1e9:,.1f} GB"


def no_kv_block(error: ParamError, values: Mapping[str, ParamValue], inputs, model_label: str) -> ParamError:
    """A pool without one KV block: the utilization's when a higher one would leave a block,
    else the model's, naming the settings that can make room."""
    settings, hardware, shape = inputs.settings, inputs.hardware, inputs.shape
    memory = hardware.memory_bytes
    if memory <= 0:  # a typed figure that rounds to no bytes holds nothing
        return ParamError("memory_gb", "memory_gb must be more than 0 bytes: type the GPU's memory in GB")
    block = block_cost(shape, settings.block_size, settings.kv_bytes_per_value, settings.tensor_parallel)

    def weights_at(tensor: int) -> float:
        parallel = Parallelism(tensor, settings.data_parallel, settings.expert_parallel)
        cost = model_cost(shape, settings.bytes_per_param, settings.kv_bytes_per_value, parallel)
        return cost.weight_bytes_per_gpu

    weights = weights_at(settings.tensor_parallel)
    needed = weights + settings.overhead_bytes + block.block_bytes  # one GPU, for one KV block
    if needed <= memory:
        least = math.ceil(needed / memory * 100) / 100
        return ParamError(
            "gpu_memory_utilization",
            f"gpu_memory_utilization leaves no room for a KV block: the weights take {_gb(weights)} a "
            f"GPU and the engine's reserve {_gb(settings.overhead_bytes)}, of the "
            f"{_gb(memory * settings.gpu_memory_utilization)} it may use; raise it to at least {least:g}",
        )
    ways = []
    for tensor in TP_CHOICES:
        if tensor <= settings.tensor_parallel:
            continue
        try:
            split = weights_at(tensor)
            block_at = block_cost(shape, settings.block_size, settings.kv_bytes_per_value, tensor)
        except ValueError:  # a split that leaves the KV heads uneven
            continue
        if (
            split + settings.overhead_bytes + block_at.block_bytes
        ) / memory <= settings.gpu_memory_utilization:
            ways.append(f"tensor_parallel {tensor} ({_gb(split)} of weights a GPU)")
            break
    least_memory = math.ceil(needed / settings.gpu_memory_utilization / 1e9)
    ways.append(f"a GPU with at least {least_memory:,} GB")
    ways.append("a smaller model" + (" or precision" if "precision" in values else ""))
    return ParamError(
        "model",
        f"the weights of {model_label} take {_gb(weights)} a GPU"
        + (f" at tensor_parallel {settings.tensor_parallel}" if settings.tensor_parallel > 1 else "")
        + f"; with the engine's {_gb(settings.overhead_bytes)} reserve and one KV block that is more "
        f"than all {_gb(memory)} of the {hardware.vendor_name}, so no GPU memory utilization can "
        f"make room. What can: {', '.join(ways)}",
    )

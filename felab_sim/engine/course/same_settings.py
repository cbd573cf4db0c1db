"""The same settings on another serving page: what step-time, the engine and the chain are
given so that each opens at the model, GPU, precision and traffic the page it is linked from
shows (felab_sim/engine/serving/serving_defaults.py is where all three start).

Each page models a different workload, and its figures differ for that reason alone:
step-time prices one step of a batch it is told; the chain reads every conversation at its full
length with no prefills between the decodes; the engine runs requests arriving over time, its
steps mixing the waiting prompts' prefills into the running decodes. :func:`decode_alone` is the
engine's decode step without those prefills, step-time's figure, for the engine page to print
beside its TPOT. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..calculators import CALCULATORS
from ..core.calculator import Result as CalculatorResult
from ..core.params import ParamError, ParamValue
from ..serving.run_results import Result

PASTED_MODEL = "config"  # the engine's model choice that reads a pasted config.json
TYPED_GPU = "custom"  # the engine's and the chain's hardware typed in field by field
# The engine page's cap on requests a run (felab_sim/engine/sweep/limits.py): a chain's users are run
# in a closed loop of this many requests.
ENGINE_LINK_REQUESTS = 100


def _same_gpu(values: Mapping[str, ParamValue]) -> dict[str, ParamValue]:
    """The GPU as step-time takes it: a preset with any typed bandwidth or peak."""
    return {
        "hardware": values["hardware"],
        "bandwidth_gbs": values.get("bandwidth_gbs"),
        "peak_tflops": values.get("peak_tflops"),
    }


def engine_to_step_time(
    values: Mapping[str, ParamValue], batch: int, context: int
) -> dict[str, ParamValue] | None:
    """step-time at the engine's model, GPU and precision, a decode of ``batch`` sequences of
    ``context`` tokens; None where step-time cannot take them (a pasted model, a typed-in GPU)."""
    if values["model"] == PASTED_MODEL or values["hardware"] == TYPED_GPU:
        return None
    return {
        "model": values["model"],
        **_same_gpu(values),
        "precision": values["precision"],
        "tensor_parallel": values["tensor_parallel"],
        "batch": max(1, batch),
        "context_tokens": context,
    }


def engine_to_chain(values: Mapping[str, ParamValue]) -> dict[str, ParamValue] | None:
    """The chain at the engine's model, GPU, precision, engine settings and request size."""
    if values["model"] == PASTED_MODEL:
        return None
    return {
        "model": values["model"],
        **_same_gpu(values),
        "memory_gb": values.get("memory_gb"),
        "precision": values["precision"],
        "tensor_parallel": values["tensor_parallel"],
        "max_num_seqs": values["max_num_seqs"],
        "memory_utilization": values["gpu_memory_utilization"],
        "prompt_tokens": values["input_tokens"],
        "reply_tokens": values["output_tokens"],
    }


def chain_to_engine(p: Mapping[str, ParamValue], users: int) -> dict[str, ParamValue] | None:
    """The engine at the chain's settings: ``users`` conversations in flight (a closed loop of
    the engine page's most requests), each the chain's prompt and reply."""
    if p["model_config"]:
        return None
    return {
        "model": p["model"],
        "hardware": p["hardware"],
        "memory_gb": p["memory_gb"],
        "bandwidth_gbs": p["bandwidth_gbs"],
        "peak_tflops": p["peak_tflops"],
        "precision": p["precision"],
        "tensor_parallel": p["tensor_parallel"],
        "max_num_seqs": p["max_num_seqs"],
        "gpu_memory_utilization": p["memory_utilization"],
        "workload": "concurrency",
        "concurrency": max(1, users),
        "requests": ENGINE_LINK_REQUESTS,
        "input_tokens": p["prompt_tokens"],
        "output_tokens": p["reply_tokens"],
    }


def step_time_to_engine(p: Mapping[str, ParamValue]) -> dict[str, ParamValue]:
    """The engine at step-time's model, GPU and precision, ``batch`` requests in flight."""
    return {
        "model": p["model"],
        **_same_gpu(p),
        "precision": p["precision"],
        "tensor_parallel": p["tensor_parallel"],
        "workload": "concurrency",
        "concurrency": max(1, int(p["batch"])),  # type: ignore[arg-type]
    }


def step_time_to_chain(p: Mapping[str, ParamValue]) -> dict[str, ParamValue]:
    """The chain at step-time's model, GPU, precision and KV type."""
    return {
        "model": p["model"],
        **_same_gpu(p),
        "precision": p["precision"],
        "kv_dtype": p["kv_dtype"],
        "tensor_parallel": p["tensor_parallel"],
    }


@dataclass(frozen=True)
class DecodeAlone:
    """The engine's decode step with no prompt in it: step-time at the run's typical batch."""

    batch: int  # the requests running on average while any ran
    context: int  # a reply's middle: its prompt and half its output
    settings: dict[str, ParamValue]  # step-time's
    result: CalculatorResult


def mean_running(result: Result) -> int:
    """The requests running on average over the samples in which any ran (at least 1)."""
    busy = [sample.running for sample in result.timeseries if sample.running]
    return max(1, round(sum(busy) / len(busy))) if busy else max(1, result.max_running)


def decode_alone(values: Mapping[str, ParamValue], result: Result) -> DecodeAlone | None:
    """step-time's decode step at the run's mean running requests, each at the middle of its reply;
    None where step-time cannot take the settings (it refuses them, naming one)."""
    if not result.requests:
        return None
    first = result.requests[0]
    batch = mean_running(result)
    context = first.input_toks + first.output_toks // 2
    settings = engine_to_step_time(values, batch, context)
    if settings is None:
        return None
    try:
        priced = CALCULATORS["step-time"].run(settings)
    except ParamError:  # a GPU step-time does not offer (no published peak), or a setting past its range
        return None
    return DecodeAlone(batch, context, settings, priced)

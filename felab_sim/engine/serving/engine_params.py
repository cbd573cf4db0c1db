"""The continuous-batching engine's settings as parameters, declared once, and a run built from them.

``ENGINE_PARAMS`` is read by the ``engine`` command's flags, the /sim/engine/ page's form and
/sim/engine.json's validation (docs/architecture.md, "Parameters: declared once").
:func:`engine_inputs` turns checked values (and a pasted config.json) into what ``simulate``
takes; every refusal is a ParamError naming the setting to change. Pure Python, no Django.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..core.params import Param, ParamError, ParamValue, parse_all
from ..hardware.hardware import GB, HARDWARE, TERA, Hardware, Interconnect, hardware_preset
from ..models.model_config import ModelConfigError
from ..models.model_kv_cache import kv_heads_per_gpu
from ..models.model_params import read_pasted_config
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from ..models.model_shapes import ModelShape
from ..models.precisions import PRECISION_LABELS, PRECISIONS
from . import serving_defaults
from .anchors import AnchorRun, bundled_trace, matching_anchor
from .binding import Binding
from .run_results import Result, stored_result
from .simulate import (
    MAX_WORK,
    ClosedLoop,
    EngineSettings,
    TraceRequest,
    WorkBudgetExceeded,
    concurrency_sweep,
    simulate,
)
from .step_time import Calibration, calibration_for
from .validation import engine_expected_errors, scaled_from_h200

PASTED = "config"  # the model choice that reads the pasted config.json
CUSTOM = "custom"  # the hardware choice typed in field by field
RATE, CONCURRENCY, TRACE = "rate", "concurrency", "trace"
# The seed of a rate workload's arrivals: the same settings give the same run, and a shared URL
# shows what its sender saw.
ARRIVAL_SEED = 0
# A typed-in part talks to its peers over PCIe 5.0 x16 unless told otherwise.
DEFAULT_LINK_GBS = 64.0
_DEFAULTS = EngineSettings()

MODEL_PARAMS = (
    Param(
        "model",
        "choice",
        serving_defaults.MODEL,
        "A model preset (its published config.json), or a config.json of your own",
        choices={**{name: name for name in MODEL_PRESETS}, PASTED: "my config.json"},
    ),
)
HARDWARE_PARAMS = (
    Param(
        "hardware",
        "choice",
        serving_defaults.HARDWARE,
        "One GPU's preset from its vendor's spec sheet, or custom: typed in",
        choices={**{h.name: h.vendor_name for h in HARDWARE}, CUSTOM: "custom (typed in)"},
    ),
    Param(
        "memory_gb",
        "float",
        None,
        "Device memory of one GPU (empty: the preset's)",
        unit="GB",
        label="GPU memory",
        # Less than 0.1 GB holds no model's weights; the chain's memory field stops at the same.
        low=0.1,
        high=10_000,
        optional=True,
    ),
    Param(
        "bandwidth_gbs",
        "float",
        None,
        "Memory bandwidth of one GPU (empty: the preset's)",
        unit="GB/s",
        label="memory bandwidth",
        low=0,
        low_open=True,
        high=100_000,
        optional=True,
    ),
    Param(
        "peak_tflops",
        "float",
        None,
        "Dense BF16 tensor peak of one GPU, no sparsity (empty: the preset's)",
        unit="TFLOP/s",
        label="peak compute",
        low=0,
        low_open=True,
        high=100_000,
        optional=True,
    ),
    Param(
        "interconnect_gbs",
        "float",
        None,
        "GPU-to-GPU link, one direction (empty: the preset's, or PCIe 5.0 x16 typed in)",
        unit="GB/s",
        label="interconnect",
        low=0,
        low_open=True,
        high=100_000,
        optional=True,
    ),
)
SETTINGS_PARAMS = (
    Param(
        "precision",
        "choice",
        serving_defaults.PRECISION,
        "The weights' precision: bytes per weight, and the tensor cores' peak used (MXFP4: 4-bit values and one scale per 32; on a MoE only its experts; embeddings and head stay BF16)",
        choices=PRECISION_LABELS,
    ),
    Param("tensor_parallel", "int", 1, "GPUs one replica's layers are split over", low=1, high=8),
    Param("data_parallel", "int", 1, "Replicas behind vLLM's balancer", low=1, high=8),
    Param("expert_parallel", "bool", False, "Spread a mixture of experts' experts over every GPU"),
    Param(
        "max_num_seqs",
        "int",
        _DEFAULTS.max_num_seqs,
        "Most requests a replica runs at once",
        low=1,
        high=4096,
    ),
    Param(
        "max_num_batched_tokens",
        "int",
        _DEFAULTS.max_num_batched_tokens,
        "Token budget of one step: decodes take one each, a prompt the rest in chunks",
        unit="tokens",
        low=1,
        high=1_048_576,
    ),
    Param(
        "block_size", "int", _DEFAULTS.block_size, "Tokens in one KV block", unit="tokens", low=1, high=1024
    ),
    Param(
        "gpu_memory_utilization",
        "float",
        _DEFAULTS.gpu_memory_utilization,
        "Share of GPU memory the engine may use: weights, then a reserve, then KV blocks",
        label="GPU memory utilization",
        low=0.01,
        high=1,
    ),
    Param("prefix_caching", "bool", _DEFAULTS.prefix_caching, "Reuse cached KV blocks of a shared prefix"),
)
WORKLOAD_PARAMS = (
    Param(
        "workload",
        "choice",
        RATE,
        "Requests arriving at a rate (open loop), a fixed number in flight (closed loop), or the "
        "300 ShareGPT requests of LLMServingSim's measured vLLM runs",
        choices={
            RATE: "requests at a rate",
            CONCURRENCY: "a fixed concurrency",
            TRACE: "the measured runs' ShareGPT trace",
        },
    ),
    Param("requests", "int", 100, "Requests in the run (the trace has its own 300)", low=1, high=1_000_000),
    Param(
        "rate",
        "float",
        10.0,
        "Mean arrival rate (Poisson, the same seed every time)",
        unit="requests/s",
        low=0,
        low_open=True,
        high=1_000_000,
    ),
    Param("concurrency", "int", 16, "Requests in flight at once", low=1, high=100_000),
    Param(
        "input_tokens",
        "int",
        serving_defaults.PROMPT_TOKENS,
        "Prompt tokens of each request",
        unit="tokens",
        low=1,
        high=1_048_576,
    ),
    Param(
        "output_tokens",
        "int",
        serving_defaults.REPLY_TOKENS,
        "Output tokens of each request",
        unit="tokens",
        low=1,
        high=1_048_576,
    ),
)
ENGINE_PARAMS: tuple[Param, ...] = MODEL_PARAMS + HARDWARE_PARAMS + SETTINGS_PARAMS + WORKLOAD_PARAMS
ENGINE_PARAM_NAMES = tuple(param.name for param in ENGINE_PARAMS)
# Not a Param: a whole config.json, longer than any one value (felab_sim/engine/sweep/limits.py caps it).
MODEL_CONFIG = "model_config"


@dataclass(frozen=True)
class EngineInputs:
    """What ``simulate`` takes, built from the settings: the open-loop trace, or the closed loop
    and the one request size it repeats."""

    shape: ModelShape
    hardware: Hardware
    settings: EngineSettings
    trace: tuple[TraceRequest, ...]
    closed_loop: ClosedLoop | None
    calibration: Calibration | None = None  # None: the GPU's own (felab_sim/engine/hardware/calibration.py)


def parse_engine_values(raw: Mapping[str, object]) -> dict[str, ParamValue]:
    """Every declared setting, checked, defaults filled; unknown names refused."""
    return parse_all(ENGINE_PARAMS, raw, owner="the engine")


def model_shape(values: Mapping[str, ParamValue], model_config: str | None) -> ModelShape:
    pasted = (model_config or "").strip()
    if values["model"] != PASTED:
        if pasted:
            raise ParamError(
                MODEL_CONFIG,
                f"{MODEL_CONFIG} is given but the model is {values['model']}: choose the "
                "config.json as the model, or leave it empty",
            )
        return MODEL_PRESETS[str(values["model"])].shape
    if not pasted:
        raise ParamError(
            MODEL_CONFIG, f"{MODEL_CONFIG} is empty: paste a model's config.json, or choose a preset"
        )
    try:
        return read_pasted_config(pasted)
    except ModelConfigError as error:
        raise ParamError(MODEL_CONFIG, f"{MODEL_CONFIG} cannot be read: {error}") from None
    except ValueError as error:  # not JSON at all
        raise ParamError(MODEL_CONFIG, f"{MODEL_CONFIG} cannot be read: {error}") from None


def _typed(values: Mapping[str, ParamValue], name: str) -> float | None:
    value = values[name]
    return None if value is None else float(value)  # type: ignore[arg-type]


def engine_hardware(values: Mapping[str, ParamValue]) -> Hardware:
    """The preset with any typed-in figure put in its place, or a part typed in whole.

    A preset keeps its name (so its fitted efficiencies) when a figure is changed: a student
    asking "what if this card had more memory" still sees that card's engine."""
    memory, bandwidth, peak, link = (
        _typed(values, name) for name in ("memory_gb", "bandwidth_gbs", "peak_tflops", "interconnect_gbs")
    )
    if values["hardware"] == CUSTOM:
        for name, given in (("memory_gb", memory), ("bandwidth_gbs", bandwidth), ("peak_tflops", peak)):
            if given is None:
                raise ParamError(name, f"{name} must be typed in for typed-in hardware (or choose a preset)")
        base = Hardware(
            CUSTOM,
            "typed-in GPU",
            memory_gb=memory or 0.0,
            memory_unit="GB",
            memory_bytes=0,
            memory_bandwidth=0.0,
            bf16_flops=None,
            fp8_flops=None,
            interconnect=Interconnect("typed in", DEFAULT_LINK_GBS * GB, "typed in"),
            source="typed in",
            checked_in="typed in",
        )
    else:
        base = hardware_preset(str(values["hardware"]))
    changes: dict[str, object] = {}
    if memory is not None:
        changes |= {"memory_gb": memory, "memory_unit": "GB", "memory_bytes": round(memory * GB)}
    if bandwidth is not None:
        changes["memory_bandwidth"] = bandwidth * GB
    if peak is not None:
        # The typed figure is BF16; FP8 weights run at the preset's FP8 peak (a typed-in part has none).
        changes["bf16_flops"] = peak * TERA
    if link is not None:
        changes["interconnect"] = Interconnect("typed in", link * GB, "typed in")
    hardware = replace(base, **changes) if changes else base
    if hardware.bf16_flops is None:
        raise ParamError(
            "peak_tflops",
            f"peak_tflops must be typed in: {hardware.vendor_name} has no published dense BF16 value",
        )
    return hardware


def engine_settings(values: Mapping[str, ParamValue], shape: ModelShape) -> EngineSettings:
    tensor = int(values["tensor_parallel"])  # type: ignore[arg-type]
    try:
        kv_heads_per_gpu(shape, tensor)
    except ValueError as error:
        raise ParamError(
            "tensor_parallel", f"tensor_parallel must split the KV heads evenly: {error}"
        ) from None
    if values["expert_parallel"] and not shape.is_moe:
        raise ParamError("expert_parallel", "expert_parallel needs a mixture-of-experts model")
    return EngineSettings(
        max_num_seqs=int(values["max_num_seqs"]),  # type: ignore[arg-type]
        max_num_batched_tokens=int(values["max_num_batched_tokens"]),  # type: ignore[arg-type]
        block_size=int(values["block_size"]),  # type: ignore[arg-type]
        gpu_memory_utilization=float(values["gpu_memory_utilization"]),  # type: ignore[arg-type]
        prefix_caching=bool(values["prefix_caching"]),
        tensor_parallel=tensor,
        data_parallel=int(values["data_parallel"]),  # type: ignore[arg-type]
        expert_parallel=bool(values["expert_parallel"]),
        bytes_per_param=PRECISIONS[str(values["precision"])],
    )


def rate_trace(requests: int, rate: float, input_tokens: int, output_tokens: int) -> list[TraceRequest]:
    """``requests`` of one size arriving as a Poisson process at ``rate`` a second, the first at 0."""
    rng = random.Random(ARRIVAL_SEED)
    found, at = [], 0.0
    for _ in range(requests):
        found.append(TraceRequest(at, input_tokens, output_tokens))
        at += rng.expovariate(rate)
    return found


def engine_inputs(
    values: Mapping[str, ParamValue],
    model_config: str | None = None,
    trace: list[TraceRequest] | None = None,
    calibration_text: str | None = None,
) -> EngineInputs:
    """The run the settings describe. ``trace`` (the command's --trace) replaces the generated
    requests: its arrivals for a rate workload, its sizes in turn for a concurrency;
    ``calibration_text`` (--calibration) a calibration file's contents for the GPU's own."""
    shape = model_shape(values, model_config)
    hardware = engine_hardware(values)
    calibration = calibration_for(hardware, calibration_text) if calibration_text else None
    settings = engine_settings(values, shape)
    requests = int(values["requests"])  # type: ignore[arg-type]
    sizes = trace
    if sizes is None and values["workload"] == TRACE:
        sizes = list(bundled_trace(str(values["model"]), str(values["hardware"])))
    if sizes is None:
        input_tokens, output_tokens = int(values["input_tokens"]), int(values["output_tokens"])  # type: ignore[arg-type]
        if values["workload"] == CONCURRENCY:
            sizes = [TraceRequest(0.0, input_tokens, output_tokens)]
        else:
            sizes = rate_trace(requests, float(values["rate"]), input_tokens, output_tokens)  # type: ignore[arg-type]
    elif not sizes:
        raise ParamError("trace", "trace: the file holds no requests")
    closed = None
    if values["workload"] == CONCURRENCY:
        closed = ClosedLoop(int(values["concurrency"]), requests)  # type: ignore[arg-type]
    return EngineInputs(shape, hardware, settings, tuple(sizes), closed, calibration)


HARDWARE_FIGURES = ("memory_gb", "bandwidth_gbs", "peak_tflops", "interconnect_gbs")


def anchor_for(values: Mapping[str, ParamValue], inputs: EngineInputs) -> AnchorRun | None:
    """The measured vLLM run these settings repeat (felab_sim/engine/serving/anchors.py), if any."""
    return matching_anchor(
        str(values["model"]),
        str(values["hardware"]),
        any(values[name] is not None for name in HARDWARE_FIGURES),
        inputs.settings,
        on_trace=values["workload"] == TRACE,
    )


# Lesson 03's sweep: its levels and its 128-token replies (max_tokens), each prompt the workload's.
SWEEP_LEVELS = (1, 2, 4, 8, 16, 32)
SWEEP_OUTPUT_TOKENS = 128


def run_engine(inputs: EngineInputs, sample_interval: float = 1.0, work_budget: float = MAX_WORK) -> Result:
    return simulate(
        list(inputs.trace),
        inputs.shape,
        inputs.hardware,
        inputs.settings,
        calibration=inputs.calibration,
        closed_loop=inputs.closed_loop,
        sample_interval=sample_interval,
        work_budget=work_budget,
    )


def sweep_requests(level: int) -> int:
    """Requests at one level: two rounds of C, at least 8 (lesson 03's sweep sends max(12, 3 × C);
    the engine's numbers settle sooner, and a web request's budget is small)."""
    return max(8, 2 * level)


def sweep_engine(inputs: EngineInputs, work_budget: float = MAX_WORK) -> list[dict[str, float]]:
    """Lesson 03's closed-loop sweep on this engine: its levels and metrics, ``sweep_requests``
    requests a level, each of the workload's first prompt size and 128 output tokens (fewer if
    the workload's are fewer)."""
    first = inputs.trace[0]
    size = TraceRequest(0.0, first.prompt_tokens, min(first.output_tokens, SWEEP_OUTPUT_TOKENS))
    return concurrency_sweep(
        SWEEP_LEVELS,
        [size],
        inputs.shape,
        inputs.hardware,
        inputs.settings,
        requests_per_level=sweep_requests,
        work_budget=work_budget,
    )


def anchor_values(run: AnchorRun) -> dict[str, ParamValue]:
    """The settings that choose a measured run on the engine page: its model, GPU and engine
    settings, on the bundled trace."""
    precision = next(name for name, size in PRECISIONS.items() if size == run.settings.bytes_per_param)
    return parse_engine_values(
        {
            "model": run.spec.model,
            "hardware": run.spec.hardware,
            "precision": precision,
            "workload": TRACE,
            **run.setting_values(),
        }
    )


def _stored_inputs(
    inputs: EngineInputs, values: Mapping[str, ParamValue], sample_interval: float, sweep_work: float
):
    return {
        "model": values["model"],
        "hardware": values["hardware"],
        "workload": TRACE,
        "settings": asdict(inputs.settings),
        "sample_interval": sample_interval,
        "sweep_work": sweep_work,
    }


def anchor_felab(run: AnchorRun, sample_interval: float, sweep_work: float) -> dict[str, Any]:
    """felab's run of a measured trace as the engine page would simulate it, uncapped, with the
    sweep beside it (None over ``sweep_work``, as on the page) and the inputs that produced them:
    the ``felab`` section bench/bench_engine.py --export-anchors writes into anchor_runs.json."""
    values = anchor_values(run)
    inputs = engine_inputs(values)
    result = run_engine(inputs, sample_interval)
    try:
        sweep: list[dict[str, float]] | None = sweep_engine(inputs, work_budget=sweep_work)
    except WorkBudgetExceeded:
        sweep = None
    return {
        "inputs": _stored_inputs(inputs, values, sample_interval, sweep_work),
        "result": stored_result(result),
        "sweep": sweep,
    }


def stored_anchor_run(
    values: Mapping[str, ParamValue],
    inputs: EngineInputs,
    sample_interval: float,
    sweep_work: float,
) -> tuple[AnchorRun, Result, list[dict[str, float]] | None] | None:
    """The measured run these settings repeat and felab's stored run of it with its sweep, if the
    stored run's inputs are exactly these (else None: the caller simulates)."""
    run = anchor_for(values, inputs)
    if run is None or run.felab_inputs() is None:
        return None
    if run.felab_inputs() != _stored_inputs(inputs, values, sample_interval, sweep_work):
        return None
    if list(inputs.trace) != list(run.trace):
        return None
    return run, run.felab_result(), run.felab_sweep()  # type: ignore[return-value]


def pool_json(result: Result) -> dict[str, float]:
    """The KV pool of one GPU, as vLLM sizes it at start-up."""
    pool = result.pool
    return {
        "device_bytes": pool.device_bytes,
        "gpu_memory_utilization": pool.gpu_memory_utilization,
        "weight_bytes": round(pool.weight_bytes),
        "overhead_bytes": pool.overhead_bytes,
        "block_size": pool.block_size,
        "kv_blocks": pool.num_blocks,
        "kv_tokens": pool.kv_tokens,
    }


def expected_errors_json(inputs: EngineInputs) -> dict[str, object]:
    """Each simulated figure's expected error from the validation table, and whether the GPU's
    figures are scaled from the H200's (felab_sim/engine/serving/validation.py)."""
    errors = engine_expected_errors(inputs.shape.is_moe)
    return {
        "figures": {key: error.as_json() for key, error in errors.items()},
        "scaled_from_h200": inputs.calibration is None and scaled_from_h200(inputs.hardware.name),
    }


def run_json(
    values: Mapping[str, ParamValue], result: Result, binding: Binding, inputs: EngineInputs
) -> dict[str, object]:
    """The one JSON shape of a run (the command's --json and /sim/engine.json): issue 24's
    summary, requests and timeseries, with the settings, the KV pool, the binding limit and each
    figure's expected error."""
    return {
        "params": dict(values),
        **result.as_json(),
        "pool": pool_json(result),
        "binding": binding.as_json(),
        "expected_error": expected_errors_json(inputs),
    }

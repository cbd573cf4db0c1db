"""One chain from physics to money: does the model fit, how many conversations a replica holds,
how fast each types, how many replicas peak needs, and what that costs beside serverless.

Every step is a calculator's own output at settings the chain hands it (kv-cache, prefill,
roofline, sizing), so the figure here is the one its calculator's page shows at the step's link.
docs/chain.md says what each step assumes, and why the SLO is a time-to-first-token bound.
Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..calculators import CALCULATORS
from ..calculators.step_time import BANDWIDTH_GBS, PEAK_TFLOPS
from ..core.calculator import Output, OutputValue, Result, counted, typed
from ..core.numbers import format_number, format_with_unit
from ..core.params import Param, ParamError, ParamValue, parse_all
from ..hardware.hardware import GB, HARDWARE, TERA, Hardware, hardware_preset
from ..hardware.prices import price
from ..models.model_kv_cache import kv_bytes_for_sequence, kv_bytes_per_token, kv_heads_per_gpu
from ..models.model_params import model_name, shape_of
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from ..models.model_shapes import ModelShape
from ..models.model_weights import weight_bytes
from ..models.precisions import PRECISION_LABELS, PRECISIONS
from ..serving import serving_defaults
from ..serving.validation import (
    DECODE_STEP,
    PREFILL_STEP,
    SCALED_NOTE,
    ExpectedError,
    expected_error,
    scaled_from_h200,
    widest,
)

CUSTOM = "custom"
# The KV cache's type, bytes per value, and the kv-cache calculator's name for the same size.
KV_DTYPES = {"bf16": 2.0, "fp8": 1.0}
KV_DTYPE_LABELS = {"bf16": "BF16 (2 bytes)", "fp8": "FP8 (1 byte)"}
KV_CALCULATOR_DTYPE = {"bf16": "f16", "fp8": "fp8"}  # f16 and bf16 are both 2 bytes a value
# Tensor-parallel sizes tried when the model does not fit: the sizes one box's GPUs split into.
TP_SIZES = (1, 2, 4, 8, 16, 32, 64)

# Defaults: the capstone's scenario (lesson 15's example flags: peak concurrency 200,
# 5e6 tickets a month, SLO 800 ms, serverless $0.15 in / $0.60 out per 1M tokens, $8 a
# GPU-hour) with lesson 15's worked ticket (300 tokens in, 50 out, as the sizing calculator
# has it), on the drill's question "70B on one GPU?": Llama-3.1-70B (model_presets.py, its
# config.json on Hugging Face) on one H100 SXM (hardware.py, NVIDIA's datasheet) at FP8.
DEFAULT_MODEL = serving_defaults.MODEL
DEFAULT_HARDWARE = serving_defaults.HARDWARE

PARAMS: tuple[Param, ...] = (
    Param(
        "model",
        "choice",
        DEFAULT_MODEL,
        "A published model's shape (its config.json); a pasted config below wins over it.",
        choices={name: name for name in MODEL_PRESETS},
    ),
    Param(
        "model_config",
        "text",
        None,
        "A Hugging Face config.json pasted whole; it sets the layers, heads, experts and attention kinds.",
        label="config.json",
        optional=True,
        max_chars=12_000,
    ),
    Param(
        "precision",
        "choice",
        serving_defaults.PRECISION,
        "The weights' precision: bytes per weight, and the tensor cores' peak used.",
        # One size for every weight: MXFP4 (experts only on a mixture) is the engine's and step-time's.
        choices={name: PRECISION_LABELS[name] for name in ("bf16", "fp8")},
    ),
    Param(
        "kv_dtype",
        "choice",
        serving_defaults.KV_DTYPE,
        "How the KV cache stores each value (vLLM's auto: the model's 16 bits; kv_cache_dtype=fp8: 1 byte).",
        label="KV cache type",
        choices=KV_DTYPE_LABELS,
    ),
    Param(
        "tensor_parallel",
        "int",
        1,
        "GPUs one replica is split across (each holds 1/N of the weights and of the KV heads).",
        "GPUs",
        label="tensor parallel",
        low=1,
        high=64,
    ),
    Param(
        "hardware",
        "choice",
        DEFAULT_HARDWARE,
        "One GPU's preset from its vendor's spec sheet, or custom: typed in below.",
        choices={**{h.name: h.vendor_name for h in HARDWARE}, CUSTOM: "custom (typed in)"},
    ),
    Param(
        "memory_gb",
        "float",
        None,
        "Memory of one GPU, 10⁹ bytes (empty: the preset's).",
        "GB",
        label="GPU memory",
        low=0.1,
        high=100_000,
        optional=True,
    ),
    BANDWIDTH_GBS,
    PEAK_TFLOPS,
    Param(
        "memory_utilization",
        "float",
        serving_defaults.GPU_MEMORY_UTILIZATION,
        "Share of the memory the engine may use (vLLM's gpu_memory_utilization, default 0.9).",
        label="memory share",
        low=0.01,
        high=1,
    ),
    Param(
        "overhead_gb",
        "float",
        2.0,
        "Memory besides weights and KV on each GPU: activations, CUDA graphs, the runtime.",
        "GB",
        label="overhead",
        low=0,
        high=10_000,
    ),
    Param(
        "max_num_seqs",
        "int",
        serving_defaults.MAX_NUM_SEQS,
        "Most conversations one replica runs at once (vLLM's max_num_seqs; 256 as the engine page).",
        "conversations",
        label="max running",
        low=1,
        high=4096,
    ),
    Param(
        "peak_users",
        "int",
        200,
        "Users in a conversation at the same moment, at peak (the capstone: 200).",
        "users",
        label="peak users",
        low=1,
        high=100_000_000,
    ),
    Param(
        "prompt_tokens",
        "int",
        serving_defaults.PROMPT_TOKENS,
        "Prompt tokens of each conversation (lesson 15's ticket: 300).",
        "tokens",
        label="prompt",
        low=1,
        high=1_000_000,
    ),
    Param(
        "reply_tokens",
        "int",
        serving_defaults.REPLY_TOKENS,
        "Tokens of each reply (lesson 15's ticket: 50).",
        "tokens",
        label="reply",
        low=1,
        high=1_000_000,
    ),
    Param(
        "slo_ms",
        "float",
        800.0,
        "Longest time to first token a user may wait (the capstone: 800 ms; lesson 03's SLO is on TTFT).",
        "ms",
        label="TTFT SLO",
        low=1,
        high=10_000_000,
    ),
    Param("headroom", "float", 0.2, "Spare capacity on top of peak, as a share (0.2 = 20%).", low=0, high=10),
    Param(
        "gpu_hour_usd",
        "float",
        price("dedicated-gpu-hour").usd,
        "Price of one GPU-hour, dedicated (the capstone: $8).",
        "$/h",
        label="GPU-hour price",
        low=0,
        high=1_500,  # × 64 GPUs a replica stays within the sizing calculator's $100,000 an hour
    ),
    CALCULATORS["sizing"].param("hours"),  # the chain's month is the sizing calculator's
    Param(
        "input_usd_per_m",
        "float",
        price("capstone-serverless-input").usd,
        "Serverless price of prompt tokens (the capstone: $0.15).",
        "$/M tokens",
        label="serverless input price",
        low=0,
        high=100_000,
    ),
    Param(
        "output_usd_per_m",
        "float",
        price("capstone-serverless-output").usd,
        "Serverless price of reply tokens (the capstone: $0.60).",
        "$/M tokens",
        label="serverless output price",
        low=0,
        high=100_000,
    ),
    Param(
        "tickets_per_month",
        "int",
        5_000_000,
        "Conversations (tickets) a month (the capstone: 5 million).",
        "tickets",
        label="tickets a month",
        low=0,
        high=1_000_000_000_000,
    ),
)
PARAM_NAMES = tuple(param.name for param in PARAMS)
DEFAULTS: dict[str, ParamValue] = {param.name: param.default for param in PARAMS}


@dataclass(frozen=True)
class Step:
    """One link of the chain: a calculator's output at the settings the chain gave it."""

    key: str
    label: str
    value: OutputValue
    unit: str
    formula: str  # the step's formula with the numbers in it
    calculator: str  # the calculator's slug
    calculator_params: Mapping[str, ParamValue]  # its settings: its page opened at them shows value
    output: str  # the calculator's output key that is this step's value
    ok: bool = True  # False: the chain stops here, and ``formula`` says why
    expected: ExpectedError | None = None  # a simulated figure's expected error (validation table)

    def text(self) -> str:
        """The value as the calculator's page prints it."""
        return Output(self.value, self.unit, self.label).text()


@dataclass(frozen=True)
class Chain:
    params: dict[str, ParamValue]
    steps: tuple[Step, ...]
    verdict: str

    @property
    def complete(self) -> bool:
        return all(step.ok for step in self.steps)

    def step(self, key: str) -> Step:
        for step in self.steps:
            if step.key == key:
                return step
        raise KeyError(key)

    def as_json(self, url_of: Any) -> dict[str, object]:
        """The JSON of /sim/chain.json and ``manage.py chain --json``; ``url_of(step)`` is its link."""
        return {
            "steps": [
                {
                    "key": step.key,
                    "label": step.label,
                    "value": step.value,
                    "text": step.text(),
                    "unit": step.unit,
                    "formula": step.formula,
                    "ok": step.ok,
                    "calculator": step.calculator,
                    "output": step.output,
                    "url": url_of(step),
                    "expected_error": step.expected.as_json() if step.expected else None,
                }
                for step in self.steps
            ],
            "verdict": self.verdict,
            "complete": self.complete,
            "params": dict(self.params),
        }


# ------------------------------------------------------------------------------------ inputs


def chain_hardware(p: Mapping[str, ParamValue]) -> Hardware:
    """The preset with any typed-in figure in its place, or a GPU typed in whole."""
    memory, bandwidth, peak = (p[name] for name in ("memory_gb", "bandwidth_gbs", "peak_tflops"))
    if p["hardware"] == CUSTOM:
        for name in ("memory_gb", "bandwidth_gbs", "peak_tflops"):
            if p[name] is None:
                raise ParamError(name, f"{name} must be typed in for custom hardware (or choose a preset)")
        base = replace(hardware_preset(DEFAULT_HARDWARE), name=CUSTOM, vendor_name="typed-in GPU")
    else:
        base = hardware_preset(str(p["hardware"]))
    changes: dict[str, object] = {}
    if memory is not None:
        changes |= {"memory_gb": memory, "memory_unit": "GB", "memory_bytes": round(float(memory) * GB)}
    if bandwidth is not None:
        changes["memory_bandwidth"] = float(bandwidth) * GB
    if peak is not None:
        flops = float(peak) * TERA  # at the weights' precision, so both rates are set to it
        changes |= {"bf16_flops": flops, "fp8_flops": flops}
    return replace(base, **changes) if changes else base


def peak_flops(hardware: Hardware, bytes_per_weight: float) -> float:
    try:
        return hardware.peak_flops(bytes_per_weight)
    except ValueError:
        raise ParamError(
            "peak_tflops",
            f"peak_tflops must be typed in: {hardware.vendor_name} has no published dense peak",
        ) from None


def validate(raw: Mapping[str, object]) -> dict[str, ParamValue]:
    """Every setting checked, defaults filled in; ``ParamError`` naming the first bad one."""
    values = parse_all(PARAMS, raw, owner="the chain")
    shape = shape_of(values)
    try:
        kv_heads_per_gpu(shape, int(values["tensor_parallel"]))  # type: ignore[arg-type]
    except ValueError as error:
        if shape.mla is None:
            said = str(error)  # "tensor_parallel 3 does not divide ...": led by the setting already
            raise ParamError(
                "tensor_parallel", said if said.startswith("tensor_parallel ") else f"tensor_parallel: {said}"
            ) from None
    peak_flops(chain_hardware(values), PRECISIONS[str(values["precision"])])
    return values


# ------------------------------------------------------------------------------------- steps


def _run(calculator: str, params: Mapping[str, ParamValue], blame: str) -> Result:
    """A calculator's result at settings the chain worked out; settings outside its ground are
    the chain setting ``blame``'s to change."""
    try:
        return CALCULATORS[calculator].run(params)
    except ParamError as error:
        raise ParamError(
            blame, f"{blame}: the {calculator} calculator refuses the settings it leads to ({error.message})"
        ) from None


def _step(key: str, label: str, result: Result, output: str, formula: str, ok: bool = True) -> Step:
    out = result.outputs[output]
    return Step(key, label, out.value, out.unit, formula, result.calculator, result.params, output, ok)


def _text(value: OutputValue, unit: str) -> str:
    return Output(value, unit, "").text()


def smallest_fitting_tp(
    shape: ModelShape, bytes_per_weight: float, usable: float, overhead: float
) -> int | None:
    """The fewest GPUs (a valid tensor-parallel size) whose share of the weights leaves room."""
    total = weight_bytes(shape, bytes_per_weight).total / GB
    for tp in TP_SIZES:
        try:
            kv_heads_per_gpu(shape, tp)
        except ValueError:
            if shape.mla is None:
                continue
        if total / tp + overhead < usable:
            return tp
    return None


def walk(raw: Mapping[str, object]) -> Chain:
    """The chain at these settings, step by step, stopping at the first step that fails."""
    p = validate(raw)
    shape = shape_of(p)
    hardware = chain_hardware(p)
    precision = str(p["precision"])
    per_weight = PRECISIONS[precision]
    per_value = KV_DTYPES[str(p["kv_dtype"])]
    tp = int(p["tensor_parallel"])  # type: ignore[arg-type]
    gpus = counted(tp, "GPU")
    peak = peak_flops(hardware, per_weight)
    memory_gb = hardware.memory_bytes / GB
    overhead_gb = float(p["overhead_gb"])  # type: ignore[arg-type]
    utilization = float(p["memory_utilization"])  # type: ignore[arg-type]
    usable_gb = memory_gb * utilization
    weights = weight_bytes(shape, per_weight)
    params_b = weights.total / per_weight / 1e9 / tp  # one GPU's share of the parameters
    active_b = weights.read_per_token / per_weight / 1e9 / tp
    prompt, reply = int(p["prompt_tokens"]), int(p["reply_tokens"])  # type: ignore[arg-type]
    context = prompt + reply
    steps: list[Step] = []
    name = model_name(p) if p["model_config"] else str(p["model"])
    on = f"{name} at {precision.upper()} on {gpus} ({hardware.vendor_name})"

    # 1. The weights and the overhead on each GPU, against the memory the engine may use.
    roofline = {
        "peak_tflops": peak / TERA,
        "bandwidth_gbs": hardware.memory_bandwidth / GB,
        "bytes_per_weight": per_weight,
        "params_b": params_b,
        "active_params_b": active_b,
        "memory_gb": memory_gb,
        "memory_utilization": utilization,
        "overhead_gb": overhead_gb,
        "batch": 1,
        "context_tokens": 0,
        "kv_bytes_per_token": 0.0,
    }
    weights_gb = weights.total / tp / GB
    fits = weights_gb + overhead_gb < usable_gb
    share = f" ÷ {gpus}" if tp > 1 else ""
    fit_formula = (
        f"{format_with_unit(weights_gb + overhead_gb, 'GB')} = {typed(round(shape.total_params / 1e9, 2))} × 10⁹ "
        f"weights × {typed(per_weight, 'B')}{share} + {typed(overhead_gb, 'GB')} overhead "
        f"{'<' if fits else '≥'} {format_with_unit(usable_gb, 'GB')} usable ({typed(utilization)} × "
        f"{format_with_unit(memory_gb, 'GB')})"
    )
    if not fits:
        fit_formula += ": " + _does_not_fit(shape, per_weight, precision, usable_gb, overhead_gb, tp)
    fitted = _run("roofline", roofline, "tensor_parallel")
    steps.append(
        _step("fit", "weights + overhead on each GPU", fitted, "memory_needed_gb", fit_formula, fits)
    )
    if not fits:
        return Chain(p, tuple(steps), f"No: {on} does not fit: {steps[-1].formula.split(': ', 1)[1]}.")

    # 2. The KV pool: what is left, in tokens of every layer.
    pool_gb = usable_gb - weights_gb - overhead_gb
    per_token = sum(kv_bytes_per_token(shape, per_value, tp).values())
    model = {"model_config": p["model_config"]} if p["model_config"] else {"model": p["model"]}
    kv = {
        **model,
        "kv_dtype": KV_CALCULATOR_DTYPE[str(p["kv_dtype"])],
        "tensor_parallel": tp,
        "free_gb": pool_gb,
        "context_tokens": 1,
    }
    # kv-cache's conversations of one token are the pool's tokens: the same floor division.
    pool = _step(
        "kv_pool", "KV pool on each GPU", _run("kv-cache", kv, "memory_utilization"), "max_conversations", ""
    )
    pool_formula = (
        f"{format_with_unit(pool.value, 'tokens')} = ⌊({format_with_unit(usable_gb, 'GB')} − "
        f"{format_with_unit(weights_gb, 'GB')} weights held − {typed(overhead_gb, 'GB')} overhead = "
        f"{format_with_unit(pool_gb, 'GB')}) ÷ {typed(per_token, 'B')} a token⌋"
    )
    steps.append(replace(pool, unit="tokens", formula=pool_formula))

    # 3. Conversations of prompt + reply tokens that fit in the pool.
    sequence = kv_bytes_for_sequence(shape, context, per_value, tp).per_gpu
    kv_conversations = {**kv, "context_tokens": context}
    fit_step = _step(
        "conversations",
        "conversations that fit in the pool",
        _run("kv-cache", kv_conversations, "memory_utilization"),
        "max_conversations",
        "",
    )
    held = int(fit_step.value)  # type: ignore[arg-type]
    fit_step = replace(
        fit_step,
        unit="conversations",
        ok=held >= 1,
        formula=(
            f"{format_number(held)} = ⌊{format_with_unit(pool_gb * 1000, 'MB')} ÷ "
            f"{format_with_unit(sequence / 1e6, 'MB')} a conversation ({counted(context, 'token')}: "
            f"{typed(prompt)} prompt + {typed(reply)} reply)⌋"
            + ("" if held >= 1 else ": not one conversation fits; use FP8 KV, more GPUs or shorter prompts")
        ),
    )
    steps.append(fit_step)
    if held < 1:
        return Chain(
            p, tuple(steps), f"No: {on} holds the weights but not one {context:,}-token conversation."
        )

    # 4. Time to first token at that concurrency: the running decode step, then the prompt's pass,
    # each one step of step-time's (felab_sim/engine/hardware/step_cost.py, at the GPU's calibration).
    cap = int(p["max_num_seqs"])  # type: ignore[arg-type]
    running = min(held, cap)
    decode = {
        "model": p["model"],
        "model_config": p["model_config"],
        "hardware": DEFAULT_HARDWARE if p["hardware"] == CUSTOM else p["hardware"],
        "bandwidth_gbs": p["bandwidth_gbs"],
        "peak_tflops": p["peak_tflops"],
        "precision": precision,
        "kv_dtype": p["kv_dtype"],
        "tensor_parallel": tp,
        "batch": running,
        "context_tokens": context,
        "prompt_tokens": 0,
    }
    step_time = CALCULATORS["step-time"]
    prefill_ms = float(step_time.compute_with("step_ms", decode, batch=0, prompt_tokens=prompt))  # type: ignore[arg-type]

    def ttft(users: int) -> float:
        return float(step_time.compute_with("step_ms", decode, batch=users)) + prefill_ms  # type: ignore[arg-type]

    slo = float(p["slo_ms"])  # type: ignore[arg-type]
    concurrency = running
    if ttft(running) > slo:
        concurrency = _largest_within(ttft, running, slo)
    users = max(concurrency, 1)
    step_ms = ttft(users) - prefill_ms
    prefill_rate = prompt / (prefill_ms / 1000)
    fastest = CALCULATORS["prefill"].param("prefill_tok_s").high
    if fastest is not None and prefill_rate > fastest:
        blame = "tensor_parallel" if tp > 1 else "peak_tflops"
        raise ParamError(
            blame,
            f"{blame}: this GPU split prefills {typed(round(prefill_rate))} tokens a second, past the prefill "
            f"calculator's {typed(fastest)}; split the model over fewer GPUs",
        )
    prefill = {
        "prompt_tokens": prompt,
        "cached_tokens": 0,
        "prefill_tok_s": prefill_rate,
        "overhead_ms": step_ms,
    }
    limit = f"{format_number(held)} fit" + (
        f", at most {format_number(cap)} run (max_num_seqs)" if held > cap else ""
    )
    ttft_step = _step(
        "ttft",
        f"time to first token at {counted(users, 'user')} a replica",
        _run("prefill", prefill, "prompt_tokens"),
        "ttft_ms",
        "",
        concurrency >= 1,
    )
    decode_error = expected_error(DECODE_STEP, shape.is_moe)
    # The TTFT is a decode step plus a prefill: off by no more than the worse of the two kinds.
    ttft_error = widest(decode_error, expected_error(PREFILL_STEP, shape.is_moe))
    scaled = (
        f"; {hardware.vendor_name}: {SCALED_NOTE}"
        if p["hardware"] == CUSTOM or scaled_from_h200(str(p["hardware"]))
        else ""
    )
    why = (
        f"{ttft_step.text()} = {_text(step_ms, 'ms')} (the decode step running at {counted(users, 'user')}) + "
        f"{_text(prefill_ms, 'ms')} (one pass over the {typed(prompt)}-token prompt) "
        f"{'≤' if ttft_step.value <= slo else '>'} {typed(slo, 'ms')} SLO"  # type: ignore[operator]
    )
    if concurrency < 1:
        why += ": even one user waits longer than the SLO; a faster GPU, more GPUs or a shorter prompt"
    elif concurrency < running:
        why += f" ({limit}, but the SLO holds only up to {counted(concurrency, 'user')})"
    else:
        why += f" ({limit})"
    why += f"; {ttft_error.text} expected, {ttft_error.why}, the wider of a decode step's and a prefill's{scaled}"
    ttft_shown = replace(ttft_step, formula=why, expected=ttft_error)
    steps.append(ttft_shown)
    if concurrency < 1:
        low = ttft_error.band(float(ttft_step.value))[0]  # type: ignore[arg-type]
        return Chain(
            p,
            tuple(steps),
            f"No: the {typed(slo, 'ms')} SLO cannot hold for {on}: one user alone waits {ttft_step.text()} "
            f"({ttft_error.text} expected"
            + (
                f"; at its low end, {_text(low, 'ms')}, it would hold)."
                if low <= slo
                else ", past it at either end)."
            ),
        )

    # 5. Decode speed of each user at that concurrency, with every sequence's KV read.
    at = {**decode, "batch": concurrency}
    speed = _step(
        "decode",
        f"decode speed of each user at {counted(concurrency, 'user')}",
        _run("step-time", at, "max_num_seqs"),
        "tok_s_per_user",
        "",
    )
    outputs_at = _run("step-time", at, "max_num_seqs").outputs
    read_gb = outputs_at["weights_gb"].value
    bound_formula = (
        f"{speed.text()} = 1 ÷ {_text(step_ms, 'ms')} a step: {outputs_at['weights_gb'].text()} weights read"
        + (f" (every expert {counted(concurrency, 'user')} touch)" if shape.is_moe else "")
        + f" and {outputs_at['kv_gb'].text()} of KV a GPU at "
        f"{outputs_at['bandwidth_gbs'].text()} achieved, {outputs_at['tflop'].text()} at "
        f"{outputs_at['tflops'].text()}, {outputs_at['link_ms'].text()} on the link and "
        f"{outputs_at['fixed_ms'].text()} fixed ({outputs_at['binds'].text()} binds)"
    )
    if format_with_unit(read_gb, "GB") != format_with_unit(weights_gb, "GB"):
        # The fit counts every weight held; a step reads fewer: say which, so the two figures agree.
        skipped = (
            "all but the experts no token of the batch is routed to, and the input embedding table"
            if shape.is_moe
            else "all but the input embedding table, of which each token reads one row"
        )
        bound_formula += (
            f"; a step reads {format_with_unit(read_gb, 'GB')} of the {format_with_unit(weights_gb, 'GB')} "
            f"of weights a GPU holds: {skipped}"
        )
    bound_formula += f"; {decode_error.text} expected, {decode_error.why}{scaled}"
    steps.append(replace(speed, formula=bound_formula, expected=decode_error))

    # 6–9. Replicas for peak with headroom, then the month's bills and the crossover, where the
    # replicas are worked out again at each volume (peak users grow with tickets).
    sizing = {
        "peak_users": p["peak_users"],
        "capacity": concurrency,
        "headroom": p["headroom"],
        "input_tokens": prompt,
        "output_tokens": reply,
        "input_usd_per_m": p["input_usd_per_m"],
        "output_usd_per_m": p["output_usd_per_m"],
        "tickets_per_month": p["tickets_per_month"],
        "gpu_hour_usd": float(p["gpu_hour_usd"]) * tp,  # type: ignore[arg-type]
        "hours": p["hours"],
    }
    sized = _run("sizing", sizing, "peak_users")
    outputs = sized.outputs
    replicas = int(outputs["replicas_with_headroom"].value)  # type: ignore[arg-type]

    def money(key: str, output: str, label: str, formula: str) -> Step:
        return _step(key, label, sized, output, formula)

    per_replica = f"{typed(sizing['gpu_hour_usd'], '$')}/h a replica" + (
        f" ({gpus} × {typed(p['gpu_hour_usd'], '$')})" if tp > 1 else ""
    )
    steps += [
        money(
            "replicas",
            "replicas_with_headroom",
            "replicas for peak, with headroom",
            f"{outputs['replicas_with_headroom'].text()} = ⌈{counted(int(p['peak_users']), 'user')} × "  # type: ignore[arg-type]
            f"(1 + {typed(p['headroom'])}) ÷ {counted(concurrency, 'user')} a replica⌉"
            + (f" = {counted(replicas * tp, 'GPU')}" if tp > 1 else ""),
        ),
        money(
            "dedicated",
            "dedicated_usd_month",
            "dedicated, a month",
            f"{outputs['dedicated_usd_month'].text()} = {outputs['replicas_with_headroom'].text()} × "
            f"{typed(p['hours'])} hours × {per_replica}",
        ),
        money(
            "serverless",
            "serverless_usd_month",
            "serverless, a month",
            outputs["serverless_usd_month"].formula,
        ),
        money(
            "crossover",
            "crossover_growing_tickets_month",
            "tickets a month from which dedicated stays cheaper",
            outputs["crossover_growing_tickets_month"].formula,
        ),
    ]
    cheaper = outputs["cheaper"].value
    verdict = (
        f"Yes: {on} holds {counted(concurrency, 'conversation')} a replica at "
        f"{speed.text()} each ({decode_error.text} expected); {slo_verdict(ttft_shown, slo)}; "
        f"{counted(replicas, 'replica')} for {typed(p['peak_users'])} peak users cost "
        f"{outputs['dedicated_usd_month'].text()} a month dedicated against "
        f"{outputs['serverless_usd_month'].text()} serverless at {typed(p['tickets_per_month'])} tickets: "
        f"{cheaper} is cheaper"
    )
    crossover = outputs["crossover_growing_tickets_month"]
    if crossover.value is not None:
        verdict += f" (dedicated from {crossover.text()} a month, peak users growing with tickets)"
    elif p["tickets_per_month"] and cheaper == "serverless":
        verdict += " at every volume, peak users growing with tickets"
    return Chain(p, tuple(steps), verdict + ".")


def slo_verdict(ttft: Step, slo: float) -> str:
    """Whether the predicted time to first token meets the SLO once its expected error is counted:
    "meets" only where the whole band does, "may miss" where the band reaches past it."""
    assert ttft.expected is not None
    value = float(ttft.value)  # type: ignore[arg-type]
    high = ttft.expected.band(value)[1]
    said = f"the predicted time to first token, {ttft.text()} {ttft.expected.text}"
    if high <= slo:
        return f"meets the {typed(slo, 'ms')} SLO with {said} (expected error on such steps)"
    return f"may miss the {typed(slo, 'ms')} SLO: {said} reaches {_text(high, 'ms')} at the top of its expected error"


def _largest_within(ttft: Any, most: int, slo: float) -> int:
    """The most users whose time to first token stays within the SLO (0: not even one); the
    time only grows with users, so a bisection finds it."""
    if ttft(1) > slo:
        return 0
    low, high = 1, most  # ttft(low) ≤ slo < ttft(high)
    while high - low > 1:
        middle = (low + high) // 2
        if ttft(middle) <= slo:
            low = middle
        else:
            high = middle
    return low


def _does_not_fit(
    shape: ModelShape, per_weight: float, precision: str, usable: float, overhead: float, tp: int
) -> str:
    """Why not, naming what exceeds (the weights, the overhead, or the two together), and what
    would fit: the fewest GPUs at this precision, FP8 on these, or a smaller overhead."""
    needed = weight_bytes(shape, per_weight).total / GB
    weights = needed / tp
    weights_text = f"{format_with_unit(needed, 'GB')} of weights{f' ÷ {tp} GPUs' if tp > 1 else ''}"
    room = format_with_unit(usable, "GB")
    per_gpu = f" ({format_with_unit(weights, 'GB')} a GPU)" if tp > 1 else ""
    if overhead >= usable:
        reason = f"the {typed(overhead, 'GB')} overhead alone is more than the {room} usable"
    elif weights >= usable:
        reason = f"{weights_text} leave no room in {room}"
    else:
        reason = (
            f"{weights_text}{per_gpu} and the {typed(overhead, 'GB')} "
            f"overhead together are more than the {room} usable"
        )
    hints = []
    if weights < usable:
        hints.append(f"an overhead under {format_with_unit(usable - weights, 'GB')} would")
    smallest = smallest_fitting_tp(shape, per_weight, usable, overhead)
    if smallest is not None and smallest > tp:
        hints.append(f"tensor_parallel {smallest} would ({format_with_unit(needed / smallest, 'GB')} a GPU)")
    if precision != "fp8" and weight_bytes(shape, PRECISIONS["fp8"]).total / GB / tp + overhead < usable:
        hints.append(f"FP8 on {counted(tp, 'GPU')} would ({format_with_unit(needed / 2 / tp, 'GB')} a GPU)")
    return reason + (f"; {' or '.join(hints)}" if hints else "")

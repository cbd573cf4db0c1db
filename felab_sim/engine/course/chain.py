"""One chain from physics to money: does the model fit, how many conversations a replica holds,
how fast each types, how many replicas peak needs, and what that costs beside serverless.

Every step is a calculator's own output at settings the chain hands it (kv-cache, prefill,
roofline, sizing), so the figure here is the one its calculator's page shows at the step's link.
``walk`` takes each step in turn; the settings it reads, their defaults and their checking are
felab_sim/engine/course/chain_settings.py's. docs/chain.md says what each step assumes, and why
the SLO is a time-to-first-token bound. Pure Python: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..calculators import CALCULATORS
from ..core.calculator import Output, OutputValue, Result, counted, typed
from ..core.numbers import format_number, format_with_unit
from ..core.params import ParamError, ParamValue
from ..hardware.hardware import GB, TERA, Hardware
from ..models.model_kv_cache import kv_bytes_for_sequence, kv_bytes_per_token
from ..models.model_params import model_name, shape_of
from ..models.model_shapes import ModelShape
from ..models.model_weights import WeightBytes, weight_bytes
from ..models.precisions import PRECISIONS
from ..serving.validation import (
    DECODE_STEP,
    PREFILL_STEP,
    SCALED_NOTE,
    ExpectedError,
    expected_error,
    scaled_from_h200,
    widest,
)
from .chain_fit import does_not_fit
from .chain_settings import (
    CUSTOM,
    DEFAULT_HARDWARE,
    KV_CALCULATOR_DTYPE,
    KV_DTYPES,
    chain_hardware,
    peak_flops,
    validate,
)


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


@dataclass
class _Walk:
    """What every step reads: the settings, the figures worked out from them, the steps so far."""

    p: dict[str, ParamValue]
    shape: ModelShape
    hardware: Hardware
    precision: str
    per_weight: float
    per_value: float
    tp: int
    gpus: str  # "2 GPUs": the tensor-parallel split as the formulas print it
    peak: float
    memory_gb: float
    overhead_gb: float
    utilization: float
    usable_gb: float
    weights: WeightBytes
    prompt: int
    reply: int
    on: str  # the model, its precision and the GPUs: what the verdict is about
    steps: list[Step] = field(default_factory=list)

    @property
    def context(self) -> int:
        return self.prompt + self.reply

    @property
    def weights_gb(self) -> float:
        """One GPU's share of the weights held."""
        return self.weights.total / self.tp / GB

    def stop(self, verdict: str) -> Chain:
        return Chain(self.p, tuple(self.steps), verdict)


@dataclass(frozen=True)
class _Ttft:
    """What the time-to-first-token step settles for the steps after it."""

    decode: dict[str, ParamValue]  # step-time's settings for the running decode step
    concurrency: int  # users a replica takes: as many as fit and run, fewer if the SLO needs it
    step_ms: float  # the decode step at those users
    slo: float
    step: Step
    decode_error: ExpectedError
    scaled: str  # the note on a GPU whose figures are scaled from the H200's, or ""

    @property
    def speed_error(self) -> ExpectedError:
        """A user's decode speed is 1 token ÷ the step: the step's band through the division."""
        return replace(self.decode_error, reciprocal=True)


def walk(raw: Mapping[str, object]) -> Chain:
    """The chain at these settings, step by step, stopping at the first step that fails."""
    w = _start(validate(raw))
    if not _fit(w):
        return w.stop(f"No: {w.on} does not fit: {w.steps[-1].formula.split(': ', 1)[1]}.")
    held = _kv_pool(w)
    if held < 1:
        return w.stop(f"No: {w.on} holds the weights but not one {w.context:,}-token conversation.")
    ttft = _ttft(w, held)
    if ttft.concurrency < 1:
        return w.stop(_slo_cannot_hold(ttft, w.on))
    speed = _decode(w, ttft)
    return _bills(w, ttft, speed)


def _start(p: dict[str, ParamValue]) -> _Walk:
    """The figures every step reads, worked out once from the checked settings."""
    shape = shape_of(p)
    hardware = chain_hardware(p)
    precision = str(p["precision"])
    per_weight = PRECISIONS[precision]
    tp = int(p["tensor_parallel"])  # type: ignore[arg-type]
    gpus = counted(tp, "GPU")
    memory_gb = hardware.memory_bytes / GB
    utilization = float(p["memory_utilization"])  # type: ignore[arg-type]
    name = model_name(p) if p["model_config"] else str(p["model"])
    return _Walk(
        p=p,
        shape=shape,
        hardware=hardware,
        precision=precision,
        per_weight=per_weight,
        per_value=KV_DTYPES[str(p["kv_dtype"])],
        tp=tp,
        gpus=gpus,
        peak=peak_flops(hardware, per_weight),
        memory_gb=memory_gb,
        overhead_gb=float(p["overhead_gb"]),  # type: ignore[arg-type]
        utilization=utilization,
        usable_gb=memory_gb * utilization,
        weights=weight_bytes(shape, per_weight),
        prompt=int(p["prompt_tokens"]),  # type: ignore[arg-type]
        reply=int(p["reply_tokens"]),  # type: ignore[arg-type]
        on=f"{name} at {precision.upper()} on {gpus} ({hardware.vendor_name})",
    )


def _fit(w: _Walk) -> bool:
    """1. The weights and the overhead on each GPU, against the memory the engine may use."""
    roofline = {
        "peak_tflops": w.peak / TERA,
        "bandwidth_gbs": w.hardware.memory_bandwidth / GB,
        "bytes_per_weight": w.per_weight,
        "params_b": w.weights.total / w.per_weight / 1e9 / w.tp,  # one GPU's share of the parameters
        "active_params_b": w.weights.read_per_token / w.per_weight / 1e9 / w.tp,
        "memory_gb": w.memory_gb,
        "memory_utilization": w.utilization,
        "overhead_gb": w.overhead_gb,
        "batch": 1,
        "context_tokens": 0,
        "kv_bytes_per_token": 0.0,
    }
    weights_gb, overhead_gb, usable_gb = w.weights_gb, w.overhead_gb, w.usable_gb
    fits = weights_gb + overhead_gb < usable_gb
    share = f" ÷ {w.gpus}" if w.tp > 1 else ""
    fit_formula = (
        f"{format_with_unit(weights_gb + overhead_gb, 'GB')} = {typed(round(w.shape.total_params / 1e9, 2))} × 10⁹ "
        f"weights × {typed(w.per_weight, 'B')}{share} + {typed(overhead_gb, 'GB')} overhead "
        f"{'<' if fits else '≥'} {format_with_unit(usable_gb, 'GB')} usable ({typed(w.utilization)} × "
        f"{format_with_unit(w.memory_gb, 'GB')})"
    )
    if not fits:
        fit_formula += ": " + does_not_fit(w.shape, w.per_weight, w.precision, usable_gb, overhead_gb, w.tp)
    fitted = _run("roofline", roofline, "tensor_parallel")
    w.steps.append(
        _step("fit", "weights + overhead on each GPU", fitted, "memory_needed_gb", fit_formula, fits)
    )
    return fits


def _kv_pool(w: _Walk) -> int:
    """2. The KV pool: what is left, in tokens of every layer; 3. conversations of prompt + reply
    tokens that fit in it. Returns how many fit."""
    pool_gb = w.usable_gb - w.weights_gb - w.overhead_gb
    per_token = sum(kv_bytes_per_token(w.shape, w.per_value, w.tp).values())
    p = w.p
    model = {"model_config": p["model_config"]} if p["model_config"] else {"model": p["model"]}
    kv = {
        **model,
        "kv_dtype": KV_CALCULATOR_DTYPE[str(p["kv_dtype"])],
        "tensor_parallel": w.tp,
        "free_gb": pool_gb,
        "context_tokens": 1,
    }
    # kv-cache's conversations of one token are the pool's tokens: the same floor division.
    pool = _step(
        "kv_pool", "KV pool on each GPU", _run("kv-cache", kv, "memory_utilization"), "max_conversations", ""
    )
    pool_formula = (
        f"{format_with_unit(pool.value, 'tokens')} = ⌊({format_with_unit(w.usable_gb, 'GB')} − "
        f"{format_with_unit(w.weights_gb, 'GB')} weights held − {typed(w.overhead_gb, 'GB')} overhead = "
        f"{format_with_unit(pool_gb, 'GB')}) ÷ {typed(per_token, 'B')} a token⌋"
    )
    w.steps.append(replace(pool, unit="tokens", formula=pool_formula))

    context = w.context
    sequence = kv_bytes_for_sequence(w.shape, context, w.per_value, w.tp).per_gpu
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
            f"{typed(w.prompt)} prompt + {typed(w.reply)} reply)⌋"
            + ("" if held >= 1 else ": not one conversation fits; use FP8 KV, more GPUs or shorter prompts")
        ),
    )
    w.steps.append(fit_step)
    return held


def _ttft(w: _Walk, held: int) -> _Ttft:
    """4. Time to first token at that concurrency: the running decode step, then the prompt's pass,
    each one step of step-time's (felab_sim/engine/hardware/step_cost.py, at the GPU's calibration)."""
    p, prompt = w.p, w.prompt
    cap = int(p["max_num_seqs"])  # type: ignore[arg-type]
    running = min(held, cap)
    decode = _decode_settings(w, running)
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
    prefill = _prefill_settings(w, prefill_ms, step_ms)
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
    decode_error = expected_error(DECODE_STEP, w.shape.is_moe)
    # The TTFT is a decode step plus a prefill: off by no more than the worse of the two kinds.
    ttft_error = widest(decode_error, expected_error(PREFILL_STEP, w.shape.is_moe))
    scaled = (
        f"; {w.hardware.vendor_name}: {SCALED_NOTE}"
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
    w.steps.append(ttft_shown)
    return _Ttft(decode, concurrency, step_ms, slo, ttft_shown, decode_error, scaled)


def _prefill_settings(w: _Walk, prefill_ms: float, step_ms: float) -> dict[str, ParamValue]:
    """The prefill calculator's settings for the prompt's pass: step-time's rate, after the decode
    step it waits on; a rate past the calculator's ground is the GPU split's to change."""
    prefill_rate = w.prompt / (prefill_ms / 1000)
    fastest = CALCULATORS["prefill"].param("prefill_tok_s").high
    if fastest is not None and prefill_rate > fastest:
        blame = "tensor_parallel" if w.tp > 1 else "peak_tflops"
        raise ParamError(
            blame,
            f"{blame}: this GPU split prefills {typed(round(prefill_rate))} tokens a second, past the prefill "
            f"calculator's {typed(fastest)}; split the model over fewer GPUs",
        )
    return {
        "prompt_tokens": w.prompt,
        "cached_tokens": 0,
        "prefill_tok_s": prefill_rate,
        "overhead_ms": step_ms,
    }


def _decode_settings(w: _Walk, running: int) -> dict[str, ParamValue]:
    """step-time's settings for the decode step ``running`` conversations take together."""
    p = w.p
    return {
        "model": p["model"],
        "model_config": p["model_config"],
        "hardware": DEFAULT_HARDWARE if p["hardware"] == CUSTOM else p["hardware"],
        "bandwidth_gbs": p["bandwidth_gbs"],
        "peak_tflops": p["peak_tflops"],
        "precision": w.precision,
        "kv_dtype": p["kv_dtype"],
        "tensor_parallel": w.tp,
        "batch": running,
        "context_tokens": w.context,
        "prompt_tokens": 0,
    }


def _slo_cannot_hold(ttft: _Ttft, on: str) -> str:
    """The verdict when even one user waits past the SLO, and whether the low end of the expected
    error would hold it."""
    step, slo = ttft.step, ttft.slo
    assert step.expected is not None
    low = step.expected.band(float(step.value))[0]  # type: ignore[arg-type]
    return (
        f"No: the {typed(slo, 'ms')} SLO cannot hold for {on}: one user alone waits {step.text()} "
        f"({step.expected.text} expected"
        + (
            f"; measured at the low end of its expected error, {_text(low, 'ms')}, it would hold)."
            if low <= slo
            else ", past it at either end)."
        )
    )


def _decode(w: _Walk, ttft: _Ttft) -> Step:
    """5. Decode speed of each user at that concurrency, with every sequence's KV read."""
    concurrency, shape = ttft.concurrency, w.shape
    at = {**ttft.decode, "batch": concurrency}
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
        f"{speed.text()} = 1 ÷ {_text(ttft.step_ms, 'ms')} a step: {outputs_at['weights_gb'].text()} weights read"
        + (f" (every expert {counted(concurrency, 'user')} touch)" if shape.is_moe else "")
        + f" and {outputs_at['kv_gb'].text()} of KV a GPU at "
        f"{outputs_at['bandwidth_gbs'].text()} achieved, {outputs_at['tflop'].text()} at "
        f"{outputs_at['tflops'].text()}, {outputs_at['link_ms'].text()} on the link and "
        f"{outputs_at['fixed_ms'].text()} fixed ({outputs_at['binds'].text()} binds)"
    )
    weights_gb = w.weights_gb
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
    speed_error = ttft.speed_error
    bound_formula += f"; {speed_error.text} expected, {speed_error.why}{ttft.scaled}"
    shown = replace(speed, formula=bound_formula, expected=speed_error)
    w.steps.append(shown)
    return shown


def _bills(w: _Walk, ttft: _Ttft, speed: Step) -> Chain:
    """6–9. Replicas for peak with headroom, then the month's bills and the crossover, where the
    replicas are worked out again at each volume (peak users grow with tickets)."""
    p, tp, concurrency = w.p, w.tp, ttft.concurrency
    sizing = {
        "peak_users": p["peak_users"],
        "capacity": concurrency,
        "headroom": p["headroom"],
        "input_tokens": w.prompt,
        "output_tokens": w.reply,
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
        f" ({w.gpus} × {typed(p['gpu_hour_usd'], '$')})" if tp > 1 else ""
    )
    w.steps += [
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
    return w.stop(_yes(w, ttft, speed, outputs, replicas))


def _yes(w: _Walk, ttft: _Ttft, speed: Step, outputs: Mapping[str, Output], replicas: int) -> str:
    """The verdict of a chain walked to its end: what a replica holds, the SLO, the bills."""
    p = w.p
    cheaper = outputs["cheaper"].value
    verdict = (
        f"Yes: {w.on} holds {counted(ttft.concurrency, 'conversation')} a replica at "
        f"{speed.text()} each ({ttft.speed_error.text} expected); {slo_verdict(ttft.step, ttft.slo)}; "
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
    return verdict + "."


def slo_verdict(ttft: Step, slo: float) -> str:
    """Whether the predicted time to first token meets the SLO once its expected error is counted:
    "meets" only where the whole band does, "may miss" where the band reaches past it."""
    assert ttft.expected is not None
    value = float(ttft.value)  # type: ignore[arg-type]
    high = ttft.expected.band(value)[1]
    said = f"the predicted time to first token, {ttft.text()} {ttft.expected.text}"
    if high <= slo:
        return f"meets the {typed(slo, 'ms')} SLO with {said} (expected error on such steps)"
    top = "has no upper bound" if math.isinf(high) else f"may reach {_text(high, 'ms')}"
    return f"may miss the {typed(slo, 'ms')} SLO: {said}; measured, it {top} at the top of its expected error"


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

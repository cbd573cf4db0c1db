"""Step time: one engine step on real hardware, part by part (lessons 00, 04, 12).

felab_sim/engine/hardware/step_cost.py's one function, the one the engine, the chain and the other
calculators time a step with: a decode step of ``batch`` sequences each holding
``context_tokens``; with ``prompt_tokens`` the prefill of one prompt of that many tokens (alone,
or in the same step as the decodes: a mixed step). Every part with its formula: the weights (a
mixture of experts reads every expert the step's tokens touch), the KV reads, the arithmetic
(a prompt's attention is causal, about P²/2 pairs), the link between GPUs and the fixed costs,
at the GPU's calibration (felab_sim/engine/hardware/calibration.py: measured, or the measured GPUs'
ratios) with vLLM's own cost a step. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, require, typed
from ..core.chart import BLUE, GREEN, ORANGE, Figure, Series, dashed, layout, line, these_settings
from ..core.numbers import format_with_unit
from ..core.params import Param, ParamValue
from ..hardware.calibration import engine_calibration
from ..hardware.hardware import HARDWARE, Hardware, hardware_preset
from ..hardware.model_cost import (
    ModelCost,
    Parallelism,
    kernel_split,
    mla_decode_pair_flops,
    mla_prefill_pair_flops,
    model_cost,
    replicated_params,
)
from ..hardware.step_cost import Calibration, StepCost, step_cost
from ..hardware.step_load import StepLoad, combined, decode_load, prefill_load
from ..models.model_params import check_tensor_parallel, shape_of
from ..models.model_presets import BY_NAME as MODEL_PRESETS
from ..models.model_shapes import ModelShape
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

GB = 1e9
CALIBRATION_CHARS = 100_000  # a measuring script's file is about 4,000 characters

MODEL = Param(
    "model",
    "choice",
    serving_defaults.MODEL,
    "A published model's shape (its config.json); a pasted config below wins over it.",
    choices={name: name for name in MODEL_PRESETS},
)
MODEL_CONFIG = Param(
    "model_config",
    "text",
    None,
    "A Hugging Face config.json pasted whole; it sets the layers, heads, experts and attention kinds.",
    label="config.json",
    optional=True,
    max_chars=12_000,
)
HARDWARE_PARAM = Param(
    "hardware",
    "choice",
    serving_defaults.HARDWARE,
    "One GPU's preset from its vendor's spec sheet.",
    choices={h.name: h.vendor_name for h in HARDWARE if h.bf16_flops is not None},
)
PRECISION = Param(
    "precision",
    "choice",
    serving_defaults.PRECISION,
    "The weights' precision: bytes per weight, and the tensor cores' peak used (MXFP4: 4-bit values and one scale per 32; on a MoE only its experts; embeddings and head stay BF16).",
    choices=PRECISION_LABELS,
)
TENSOR_PARALLEL = Param(
    "tensor_parallel",
    "int",
    1,
    "GPUs one replica is split across (each holds 1/N of the weights and of the KV heads).",
    "GPUs",
    label="tensor parallel",
    low=1,
    high=64,
)
KV_DTYPE = Param(
    "kv_dtype",
    "choice",
    serving_defaults.KV_DTYPE,
    "How the KV cache stores each value (vLLM's auto: the model's 16 bits; kv_cache_dtype=fp8: 1 byte).",
    label="KV cache type",
    choices={"bf16": "BF16 (2 bytes)", "fp8": "FP8 (1 byte)"},
)
KV_BYTES = {"bf16": 2.0, "fp8": 1.0}
BANDWIDTH_GBS = Param(
    "bandwidth_gbs",
    "float",
    None,
    "Memory bandwidth of one GPU as the spec sheet would print it (empty: the preset's).",
    "GB/s",
    label="memory bandwidth",
    low=0.1,
    high=100_000,
    optional=True,
)
PEAK_TFLOPS = Param(
    "peak_tflops",
    "float",
    None,
    "Dense tensor peak of one GPU at the weights' precision, no sparsity (empty: the preset's).",
    "TFLOP/s",
    label="peak compute",
    low=0.001,
    high=100_000,
    optional=True,
)
CALIBRATION = Param(
    "calibration",
    "text",
    None,
    "Your GPU's measurements (what tools/measure_gpu.py writes), instead of its own calibration.",
    label="calibration file",
    optional=True,
    max_chars=CALIBRATION_CHARS,
)
BATCH = Param(
    "batch",
    "int",
    1,
    "Sequences decoded in the step (0: the prompt alone).",
    "sequences",
    low=0,
    high=100_000,
)
CONTEXT_TOKENS = Param(
    "context_tokens",
    "int",
    1024,
    "Tokens each decoding sequence holds in its KV cache.",
    "tokens",
    label="context",
    low=0,
    high=10_000_000,
)
PROMPT_TOKENS = Param(
    "prompt_tokens",
    "int",
    0,
    "A prompt prefilled in the same step (0: none).",
    "tokens",
    label="prompt",
    low=0,
    high=1_000_000,
)


def step_hardware(p: Mapping[str, ParamValue]) -> Hardware:
    """The preset, with a typed bandwidth or peak in place of its own (it keeps its name, so its
    calibration: "what if this card were faster")."""
    hardware = hardware_preset(str(p["hardware"]))
    changes: dict[str, object] = {}
    if p.get("bandwidth_gbs") is not None:
        changes["memory_bandwidth"] = float(p["bandwidth_gbs"]) * GB  # type: ignore[arg-type]
    if p.get("peak_tflops") is not None:
        flops = float(p["peak_tflops"]) * 1e12  # type: ignore[arg-type]
        changes |= {"bf16_flops": flops, "fp8_flops": flops}
    return replace(hardware, **changes) if changes else hardware


def priced(
    p: Mapping[str, ParamValue], calibration: Calibration | None = None, load: StepLoad | None = None
) -> tuple[StepCost, StepLoad, Calibration]:
    """The step the settings describe (or ``load``), on the GPU's engine calibration (or
    ``calibration``)."""
    shape = shape_of({"model_config": p.get("model_config"), "model": p["model"]})  # type: ignore[arg-type]
    hardware = step_hardware(p)
    tp = int(p["tensor_parallel"])  # type: ignore[arg-type]
    cost = model_cost(
        shape,
        PRECISIONS[str(p["precision"])],
        KV_BYTES[str(p.get("kv_dtype", "bf16"))],
        Parallelism(tensor=tp),
    )
    if calibration is None:
        calibration = engine_calibration(hardware, p.get("calibration"))  # type: ignore[arg-type]
    window = shape.sliding_window
    batch, context, prompt = (int(p[name]) for name in ("batch", "context_tokens", "prompt_tokens"))  # type: ignore[arg-type]
    if load is None:
        loads = []
        if batch:
            loads.append(decode_load(batch, context + 1, window))  # each reads its context and its new token
        if prompt:
            loads.append(prefill_load(prompt, window))
        load = combined(*loads)
    return step_cost(cost, hardware, calibration, load, Parallelism(tensor=tp)), load, calibration


def _check(p: Params) -> None:
    require(p["batch"] + p["prompt_tokens"] > 0, "batch", "batch must be at least 1 when prompt_tokens is 0")
    shape = shape_of({"model_config": p["model_config"], "model": p["model"]})
    check_tensor_parallel(shape, int(p["tensor_parallel"]))
    priced(p)  # a calibration file that cannot be read is refused here, naming it


def _compute(p: Params) -> dict[str, float | str | None]:
    step, load, _ = priced(p)
    seconds = step.seconds
    produced = p["batch"] + (1 if p["prompt_tokens"] else 0)
    return {
        "step_ms": 1000 * seconds,
        "tok_s": load.tokens / seconds,
        "tok_s_per_user": 1 / seconds if p["batch"] else None,
        "binds": step.binds,
        "weights_ms": 1000 * step.weights_s,
        "kv_ms": 1000 * step.kv_s,
        "compute_ms": 1000 * step.compute_s,
        "link_ms": 1000 * step.link_s,
        "fixed_ms": 1000 * step.fixed_s,
        "weights_gb": step.weight_bytes / GB,
        "kv_gb": step.kv_bytes / GB,
        "tflop": (step.linear_flops + step.attention_flops) / 1e12,
        "experts_touched": step.experts_touched if step.experts_touched else None,
        "bandwidth_gbs": step.bandwidth / GB,
        "tflops": step.flops / 1e12,
        "sequences_sampled": produced,
        "expected_error_pct": 100 * step_expected_error(p).share,
    }


def step_expected_error(p: Mapping[str, ParamValue]) -> ExpectedError:
    """The step time's expected error from the validation table: a decode step's rows, a prefill's,
    or the wider of the two for a step that mixes them."""
    moe = shape_of({"model_config": p.get("model_config"), "model": p["model"]}).is_moe  # type: ignore[arg-type]
    kinds = ([DECODE_STEP] if p["batch"] else []) + ([PREFILL_STEP] if p["prompt_tokens"] else [])
    return widest(*(expected_error(kind, moe) for kind in kinds))


def scaled_note(p: Mapping[str, ParamValue]) -> str:
    """ "; H100 SXM: scaled from the H200 …" where the GPU has no validation row and no file is given."""
    if p.get("calibration") or not scaled_from_h200(str(p["hardware"])):
        return ""
    return f"; {hardware_preset(str(p['hardware'])).vendor_name}: {SCALED_NOTE}"


@dataclass(frozen=True)
class PricedStep:
    """What a step's formulas are written from: the step priced at the settings, and the model,
    GPU and tensor-parallel split it was priced for."""

    step: StepCost
    load: StepLoad
    calibration: Calibration
    shape: ModelShape
    hardware: Hardware
    cost: ModelCost
    tp: int

    @property
    def gpus(self) -> str:
        """ " ÷ 2 GPUs" where the weights are split, else nothing."""
        return f" ÷ {self.tp} GPUs" if self.tp > 1 else ""


def priced_step(p: Params) -> PricedStep:
    step, load, calibration = priced(p)
    shape = shape_of({"model_config": p["model_config"], "model": p["model"]})
    tp = int(p["tensor_parallel"])
    cost = model_cost(
        shape, PRECISIONS[str(p["precision"])], KV_BYTES[str(p.get("kv_dtype", "bf16"))], Parallelism(tp)
    )
    return PricedStep(step, load, calibration, shape, step_hardware(p), cost, tp)


def _ms(seconds: float) -> str:
    return format_with_unit(1000 * seconds, "ms")


def _flops_words(s: PricedStep, out: Callable[[str], str]) -> str:
    """The FLOP/s the linear layers' products achieve: the share of the peak at the weights'
    precision, and of a product of few rows its smaller share."""
    peak = s.hardware.peak_flops(s.cost.bytes_per_param) / 1e12
    share = (
        s.calibration.fp8_compute_efficiency
        if s.cost.bytes_per_param <= 1 and s.hardware.fp8_flops
        else s.calibration.compute_efficiency
    )
    rows = s.calibration.matrix_share(s.load.tokens)
    return (
        f"{out('tflops')} ({typed(round(share, 3))} × {typed(round(peak, 1), 'TFLOP/s')}"
        + (f" × {typed(round(rows, 3))}, a product of {typed(s.load.tokens)} rows" if rows != 1 else "")
        + ")"
    )


def _compute_formula(s: PricedStep, out: Callable[[str], str]) -> str:
    """compute_ms: the linear products (the grouped expert products apart, 4-bit unpacking) and
    attention, each term its own seconds, so that they add up to the figure."""
    step, calibration, hardware = s.step, s.calibration, s.hardware
    if not step.grouped_flops:
        linear = f"{typed(round(step.linear_flops / 1e12, 3), 'TFLOP')} linear ÷ {_flops_words(s, out)}"
    else:
        per_token = s.shape.experts.experts_per_token if s.shape.experts else 0
        share = (
            f"; a 4-bit expert product at {typed(calibration.four_bit_grouped_share)} × a BF16 product's rate, "
            "a factor fitted on published runs' TTFT"
            if s.cost.four_bit
            else ""
        )
        linear = (
            f"{typed(round((step.linear_flops - step.grouped_flops) / 1e12, 3), 'TFLOP')} in the other linear products ÷ "
            f"{_flops_words(s, out)} + {typed(round(step.grouped_flops / 1e12, 3), 'TFLOP')} in the grouped expert products ÷ "
            f"{typed(round(step.grouped_rate / 1e12, 1), 'TFLOP/s')} (their {typed(round(step.expert_rows, 1))} rows an "
            f"expert: {typed(s.load.tokens)} tokens × {per_token} ÷ the experts touched{share})"
        )
    unpacking = ""
    if step.dequant_s:
        unpacking = (
            f" + {_ms(step.unpacking_beyond_s)}: unpacking {typed(round(step.dequantized_weights / 1e9, 2))} × 10⁹ 4-bit weights "
            f"to BF16 at {typed(round((calibration.dequant_weights_per_s or 0) / 1e12, 2))} × 10¹² a second takes "
            f"{_ms(step.dequant_s)} ({hardware.vendor_name} has no FP4 tensor cores; fitted), beside the "
            f"{_ms(step.unpacked_products_s)} of those weights' products, which the tensor cores run meanwhile: "
            "only what outlasts them counts"
        )
    attention_peak = hardware.peak_flops(2.0) / 1e12
    attention = (
        f"{typed(round(step.attention_flops / 1e12, 3), 'TFLOP')} attention ÷ "
        f"{typed(round(step.attention_rate / 1e12, 1), 'TFLOP/s')} "
        f"({typed(calibration.attention_efficiency)} × {typed(round(attention_peak, 1), 'TFLOP/s')} BF16, its kernel)"
    )
    return f"{out('compute_ms')} = {linear}{unpacking} + {attention}"


def _link_formula(s: PricedStep, out: Callable[[str], str]) -> str:
    """link_ms: the all-reduces of a tensor-parallel step over the GPUs' link."""
    tp, hardware = s.tp, s.hardware
    if tp <= 1:
        return f"{out('link_ms')}: one GPU, no link"
    return (
        f"{out('link_ms')} = 2 × {s.shape.layers} layers × all-reduce of {counted(s.load.tokens, 'token')} × {typed(s.shape.hidden_size)} × 2 B over "
        f"{tp} GPUs on {hardware.interconnect.name}: {typed(hardware.interconnect.base_latency_s * 1e6, 'µs')} + "
        f"{2 * (tp - 1)} ring steps × ({typed(hardware.interconnect.step_latency_s * 1e6, 'µs')} + 1/{tp} of the "
        f"message at {typed(s.calibration.link_efficiency)} × {typed(hardware.interconnect.bytes_per_s / GB, 'GB/s')})"
    )


def _fixed_formula(s: PricedStep, out: Callable[[str], str]) -> str:
    """fixed_ms: every kernel's fixed cost and the engine's own a step."""
    matrix_kernels, small_kernels = kernel_split(s.cost)
    calibration = s.calibration
    return (
        f"{out('fixed_ms')} = {matrix_kernels} matrix products × {typed(round(calibration.kernel_latency_s * 1e6, 2), 'µs')} + "
        f"{small_kernels} small kernels (norms, rotary, the cache write, attention, activations"
        + (", routing" if s.shape.experts is not None else "")
        + (", quantizing activations" if s.cost.scale_bytes_per_param else "")
        + f") × {typed(round(calibration.small_kernel_s * 1e6, 2), 'µs')} + "
        f"{typed(calibration.step_overhead_s * 1000, 'ms')} the engine's own"
    )


def _part_formulas(s: PricedStep, out: Callable[[str], str]) -> dict[str, str]:
    """The time of each part of the step, and the bandwidth and FLOP/s they run at."""
    hardware, calibration = s.hardware, s.calibration
    bandwidth = f"{out('bandwidth_gbs')} ({typed(round(calibration.memory_efficiency, 3))} × {typed(hardware.memory_bandwidth / GB, 'GB/s')})"
    return {
        "weights_ms": f"{out('weights_ms')} = {out('weights_gb')} ÷ {bandwidth}",
        "kv_ms": f"{out('kv_ms')} = {out('kv_gb')} ÷ {bandwidth}",
        "compute_ms": _compute_formula(s, out),
        "link_ms": _link_formula(s, out),
        "fixed_ms": _fixed_formula(s, out),
        "bandwidth_gbs": f"{bandwidth}: {calibration.source}",
        "tflops": f"{_flops_words(s, out)}: {calibration.source}",
    }


def _weights_formula(s: PricedStep, out: Callable[[str], str]) -> str:
    """weights_gb: the weights a token goes through, this GPU's share, each part at its bytes; of a
    mixture of experts, every expert the step's tokens touch."""
    shape, cost, gpus = s.shape, s.cost, s.gpus
    experts = ""
    if shape.experts is not None:
        e = shape.experts
        experts = (
            f" + {len(e.moe_layers)} MoE layers × {out('experts_touched')} touched a GPU "
            f"(of {e.routed_experts}{gpus}: E × (1 − (1 − {e.experts_per_token}/{e.routed_experts})^{typed(s.load.tokens)} tokens))"
            f" × {typed(round(shape.expert_params() / 1e6, 2))} M weights an expert × {typed(round(cost.expert_bytes, 5), 'B')}"
        )
    scales = (
        f" (+ {typed(round(cost.scale_bytes_per_param, 6), 'B')} a weight: one 4-byte scale a "
        f"{shape.weight_block} × {shape.weight_block} block)"
        if cost.scale_bytes_per_param
        else ""
    )
    whole = replicated_params(shape) if s.tp > 1 else 0.0
    replicated = (
        f", {typed(round(whole / 1e9, 2))} × 10⁹ of them whole on every GPU ("
        + (
            "MLA's down-projections, the router"
            if shape.mla is not None and shape.experts is not None
            else "MLA's down-projections"
            if shape.mla is not None
            else "the routers"
        )
        + ")"
        if whole
        else ""
    )
    tables = (
        f"; the output head at {typed(cost.head_bytes, 'B')}"
        if cost.head_bytes != cost.bytes_per_param + cost.scale_bytes_per_param
        else ""
    )
    if shape.experts is not None:
        return (
            f"{out('weights_gb')} = ({typed(round(shape.total_params / 1e9, 2))} × 10⁹ weights less the routed "
            f"experts and the input table){gpus}{replicated} × {typed(cost.bytes_per_param, 'B')}{scales}{tables}{experts}"
        )
    return (
        f"{out('weights_gb')} = the weights a token goes through (all but the input table){gpus}{replicated} × "
        f"{typed(cost.bytes_per_param, 'B')}{scales}{tables}"
    )


def _attention_words(p: Params, s: PricedStep, pairs: list[str]) -> str:
    """Attention's FLOP a step: over every pair of a token and one it attends to."""
    if s.shape.mla is None:
        return f"4 × head size × heads{s.gpus} × layers × ({' + '.join(pairs)})"
    # MLA decodes over the latent and prefills over expanded heads (model_cost.mla_*_pair_flops).
    m = s.shape.mla
    widths = []
    if p["batch"]:
        widths.append(
            f"2 × ({m.kv_lora_rank} + {m.qk_rope_head_dim}) + 2 × {m.kv_lora_rank} a head (decode: the query "
            f"absorbed into the latent, {typed(mla_decode_pair_flops(m))} FLOP) × {pairs[0]}"
        )
    if p["prompt_tokens"]:
        widths.append(
            f"2 × ({m.qk_nope_head_dim} + {m.qk_rope_head_dim} + {m.v_head_dim}) a head (prefill: keys and "
            f"values expanded from the latent, {typed(mla_prefill_pair_flops(m))} FLOP) × {pairs[-1]}"
        )
    return f"heads{s.gpus} × layers × ({' + '.join(widths)})"


def _read_formulas(p: Params, s: PricedStep, out: Callable[[str], str]) -> dict[str, str]:
    """What the step reads and computes on each GPU: weights, KV, FLOP and the experts touched."""
    shape, gpus = s.shape, s.gpus
    # MLA's latent cache is whole on every GPU of a tensor-parallel group: its KV is not divided.
    kv_gpus = gpus if shape.mla is None else " (MLA's latent, whole on every GPU)" if s.tp > 1 else ""
    pairs = []
    if p["batch"]:
        pairs.append(f"{counted(p['batch'], 'sequence')} × {typed(p['context_tokens'] + 1)} tokens")
    if p["prompt_tokens"]:
        pairs.append(
            f"{typed(p['prompt_tokens'])} × {typed(p['prompt_tokens'] + 1)} ÷ 2 pairs of the prompt (causal)"
        )
    return {
        "weights_gb": _weights_formula(s, out),
        "kv_gb": f"{out('kv_gb')} = ({' + '.join(pairs[:1]) or '0'}{' + the prompt’s ' + typed(p['prompt_tokens']) + ' tokens' if p['prompt_tokens'] else ''}) × the KV bytes of a token{kv_gpus}",
        "tflop": (
            f"{out('tflop')} = 2 × weights × {counted(s.load.tokens, 'token')} + {_attention_words(p, s, pairs)}"
        ),
        "experts_touched": (
            f"{out('experts_touched')} = {shape.experts.routed_experts}{gpus} × (1 − (1 − "
            f"{shape.experts.experts_per_token}/{shape.experts.routed_experts})^{typed(s.load.tokens)})"
            if shape.experts is not None
            else "— : a dense model"
        ),
    }


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    s = priced_step(p)
    error = step_expected_error(p)
    expected = error.text
    # A speed is tokens ÷ the step time: the step's band through the division.
    speed_expected = replace(error, reciprocal=True).text
    return {
        "step_ms": (
            f"{out('step_ms')} = max({out('weights_ms')} weights, {_ms(s.step.linear_compute_s)} linear compute) + "
            f"max({out('kv_ms')} KV, {_ms(s.step.attention_compute_s)} attention compute) + {out('link_ms')} link + "
            f"{out('fixed_ms')} fixed ({expected} expected)"
        ),
        "tok_s": f"{out('tok_s')} = {counted(s.load.tokens, 'token')} ÷ {out('step_ms')} ({speed_expected} expected)",
        "tok_s_per_user": f"{out('tok_s_per_user')} = 1 token ÷ {out('step_ms')} ({speed_expected} expected)"
        if p["batch"]
        else "— : no sequence decodes",
        "binds": f"{out('binds')}: the longest part of the step",
        **_part_formulas(s, out),
        **_read_formulas(p, s, out),
        "expected_error_pct": f"{out('expected_error_pct')} either way: {error.why}, applied to the step time; a speed, tokens ÷ it, is off by {speed_expected}{scaled_note(p)}",
        "sequences_sampled": f"{out('sequences_sampled')} = {counted(p['batch'], 'decode')}"
        + (" + the prompt's first token" if p["prompt_tokens"] else ""),
    }


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    top = max(8, int(p["batch"]) * 2)
    xs = sorted({max(1, round(top * i / 40)) for i in range(41)})
    calibration = priced(p)[2]
    steps = [1000 * priced({**p, "batch": x}, calibration)[0].seconds for x in xs]
    weights = [1000 * priced({**p, "batch": x}, calibration)[0].weights_s for x in xs]
    data = [
        line("step time", xs, steps, BLUE),
        dashed("reading the weights", xs, weights, GREEN, 1.5, "dot"),
        these_settings(p["batch"], 1000 * priced(p, calibration)[0].seconds),
    ]
    if measured:
        data.append({**line(measured[0].label, measured[0].x, measured[0].y, ORANGE), "mode": "markers"})
    return {"data": data, "layout": layout("sequences in the step", "step time (ms)")}


OUTPUTS = (
    OutputSpec("step_ms", "ms", "step time"),
    OutputSpec("tok_s", "tok/s", "tokens computed per second, the whole step"),
    OutputSpec("tok_s_per_user", "tok/s", "tokens per second each decoding sequence gets"),
    OutputSpec("binds", "", "what binds the step"),
    OutputSpec("weights_ms", "ms", "reading the weights"),
    OutputSpec("kv_ms", "ms", "reading the KV cache"),
    OutputSpec("compute_ms", "ms", "the arithmetic"),
    OutputSpec("link_ms", "ms", "the link between GPUs"),
    OutputSpec("fixed_ms", "ms", "fixed costs"),
    OutputSpec("weights_gb", "GB", "weights read a step, each GPU"),
    OutputSpec("kv_gb", "GB", "KV cache read a step, each GPU"),
    OutputSpec("tflop", "TFLOP", "arithmetic a step, each GPU"),
    OutputSpec("experts_touched", "experts", "experts one MoE layer reads on each GPU (empty: dense)"),
    OutputSpec("bandwidth_gbs", "GB/s", "achieved memory bandwidth"),
    OutputSpec("tflops", "TFLOP/s", "achieved by the linear layers' products at this precision and rows"),
    OutputSpec("sequences_sampled", "tokens", "tokens produced by the step"),
    OutputSpec(
        "expected_error_pct", "%", "expected error of the step time (± the validation table's largest)"
    ),
)

CALCULATOR = Calculator(
    name="step-time",
    order=65,
    title="Step time: one engine step, part by part",
    lessons=("00", "04", "12"),
    meaning=(
        "One step of a serving engine reads the weights (of a mixture of experts, every expert its "
        "tokens touch) and every sequence's KV cache, does the arithmetic, talks between GPUs and pays "
        "fixed costs; whichever is longest binds, at what the GPU really achieves."
    ),
    params=(
        MODEL,
        MODEL_CONFIG,
        HARDWARE_PARAM,
        PRECISION,
        TENSOR_PARALLEL,
        BATCH,
        CONTEXT_TOKENS,
        PROMPT_TOKENS,
        KV_DTYPE,
        BANDWIDTH_GBS,
        PEAK_TFLOPS,
        CALIBRATION,
    ),
    outputs=OUTPUTS,
    compute=_compute,
    check=_check,
    formulas=_formulas,
    chart=_chart,
    chart_description="Step time against the sequences in the step, beside the time to read the weights alone.",
    examples=(
        WorkedExample(
            "Llama-3.1-8B, one sequence of 8,192 tokens: 1.1 GB of KV a step beside 15 GB of weights "
            "(lessons 00 and 05: 8,193 tokens × 131,072 B)",
            {"model": "Llama-3.1-8B", "context_tokens": "8192"},
            "kv_gb",
            "1.1 GB",
        ),
        WorkedExample(
            "Llama-3.1-70B at FP8 on one H100 (the serving pages' scenario), one sequence of 8,192 tokens: "
            "2.7 GB of KV a step beside 69.5 GB of weights (8,193 tokens × 327,680 B)",
            {"context_tokens": "8192"},
            "kv_gb",
            "2.7 GB",
        ),
        WorkedExample(
            "DeepSeek-V3 at FP8 on 8 H200s, 256 users touch nearly every expert: 84.7 GB a GPU a step",
            {
                "model": "DeepSeek-V3",
                "hardware": "h200",
                "precision": "fp8",
                "tensor_parallel": "8",
                "batch": "256",
            },
            "weights_gb",
            "84.7 GB",
        ),
    ),
    note="The step is vLLM's: the GPU's calibration plus vLLM's own cost a step. A calibration file "
    "(`--calibration FILE`) compares its measurements with the chosen preset's spec sheet.",
)

"""Decode ceiling: tokens per second that memory bandwidth allows (lessons 00, 04, 12).

Lessons 00, 04 and 12's formulas. Every decode step reads every active weight once and every
sequence's KV cache for its context, so each sequence's ceiling is bandwidth ÷ bytes read per
step; real servers reach 60–85% of it. The weights and every sequence's KV must fit in the
memory the engine may use, or no throughput is given. GB here are 10⁹ bytes, as spec sheets and
the course write them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core.calculator import Calculator, OutputSpec, Params, WorkedExample, counted, require, typed
from ..core.chart import (
    BLUE,
    GREEN,
    ORANGE,
    RED,
    Figure,
    Measured,
    Series,
    dashed,
    evenly,
    layout,
    line,
    points,
    these_settings,
)
from ..core.params import Param
from ..hardware.calibration import with_measured
from ..hardware.decode_params import (
    ACTIVE_PARAMS_B,
    BANDWIDTH_GBS,
    BATCH,
    CONTEXT_TOKENS,
    KV_BYTES_PER_TOKEN,
    MEASURED_CALIBRATION,
    MEMORY_UTILIZATION,
    OVERHEAD_GB,
    PARAMS_B,
    PEAK_FP8_TFLOPS,
    PEAK_TFLOPS,
    PUBLISHED,
    QUANT_BITS,
    active_b,
    bits_per_weight,
    check_model_sizes,
    decode_peak_tflops,
    published_weights,
)
from ..hardware.decode_step import decode_step
from ..hardware.model_reads import weights_read_b, with_model_sizes
from ..models.model_params import (
    KV_DTYPE,
    MODEL,
    MODEL_CONFIG,
    kv_per_token_formula,
    model_chosen,
    model_name,
)
from ..models.model_presets import PRESETS
from ..sweep.measurements import measurement

STORED_PRESETS = tuple(preset.name for preset in PRESETS if preset.shape.stored is not None)
QUANT_LABELS = {
    "f16": "F16 (16 bits)",
    "q8_0": "Q8_0 (8.5 bits)",
    "q4_k_m": "Q4_K_M (4.8 bits)",
    "q3_k_m": "Q3_K_M (3.9 bits)",
    PUBLISHED: "as published (each tensor at its stored precision; a model that states it)",
}
# Lesson 00: weights and KV cache should fit in about 70% of unified memory; on a GPU, vLLM's
# gpu_memory_utilization (default 0.9) is the same share.
USABLE_SHARE = 0.7
GB = 1e9


def _check(p: Params) -> None:
    check_model_sizes(p)
    require(
        published_weights(with_model_sizes(p)) is not None
        or p["quant"] != PUBLISHED
        or p["bits_per_weight"] is not None,
        "quant",
        "'as published' needs a model whose config states how its file stores each tensor "
        f"({', '.join(STORED_PRESETS)}); choose one, or a quantization",
    )
    with_measured(p, CALCULATOR.params)  # a calibration's figures within the typed fields' bounds
    require(
        p["efficiency_low"] <= p["efficiency_high"],
        "efficiency_low",
        f"efficiency_low must be at most efficiency_high ({p['efficiency_high']:g})",
    )


def _compute(p: Params) -> dict[str, float | str | None]:
    p = with_model_sizes(p)
    bits = bits_per_weight(p)
    model_gb = p["model_gb"] if p["model_gb"] is not None else p["params_b"] * bits / 8
    weights_gb = model_gb * weights_read_b(p, active_b(p)) / p["params_b"]
    if published := published_weights(p):
        model_gb = p["model_gb"] if p["model_gb"] is not None else published[0]
        weights_gb = published[1]
    kv_gb = p["batch"] * p["context_tokens"] * p["kv_bytes_per_token"] / GB
    peak = decode_peak_tflops(p)
    step = decode_step(
        weight_bytes=weights_gb * GB,
        kv_bytes=kv_gb * GB,
        active_params=active_b(p) * 1e9,
        batch=p["batch"],
        bandwidth=p["bandwidth_gbs"] * GB,
        peak_flops=None if peak is None else peak * 1e12,
    )
    step_gb = step.bytes_read / GB
    ceiling = 1 / step.seconds  # the lower of the bandwidth's ceiling and, given a peak, the compute's
    usable = p["memory_utilization"] * p["ram_gb"]
    needed = model_gb + kv_gb + p["overhead_gb"]
    fits = needed <= usable
    per_sequence_gb = p["context_tokens"] * p["kv_bytes_per_token"] / GB
    room = usable - model_gb - p["overhead_gb"]
    measured = p["measured_tok_s"]
    shown = ceiling if fits else None  # no throughput for settings that cannot run
    return {
        "model_gb": model_gb,
        "gb_per_token": weights_gb,
        "kv_gb_per_step": kv_gb,
        "gb_per_step": step_gb,
        "kv_share_pct": 100.0 * kv_gb / step_gb,
        "ceiling_tok_s": shown,
        "total_tok_s": None if shown is None else shown * p["batch"],
        "expected_low_tok_s": None if shown is None else shown * p["efficiency_low"],
        "expected_high_tok_s": None if shown is None else shown * p["efficiency_high"],
        "ms_per_token": 1000.0 * step.seconds,
        "bits_per_weight": bits,
        "efficiency_pct": None if measured is None or shown is None else 100.0 * measured / shown,
        "measured_check": measured_check(p, shown),
        "usable_gb": usable,
        "largest_model_b": (usable - p["overhead_gb"] - kv_gb) / (bits / 8),
        "memory_needed_gb": needed,
        "fits": "yes" if fits else "no",
        "largest_batch": None if per_sequence_gb == 0 else max(0, math.floor(room / per_sequence_gb + 1e-9)),
        "memory_ceiling_tok_s": 1 / step.memory_s if fits else None,
        "compute_ceiling_tok_s": None if step.compute_s is None or not fits else 1 / step.compute_s,
        "bound": step.bound,
        "peak_tflops_used": peak,
        **model_outputs(p),
    }


def peak_formula(p: Params, shown: str) -> str:
    """Which of the peaks typed in a step runs at, said with the weights' size."""
    bytes_per_weight = p["bytes_per_weight"] if "bytes_per_weight" in p else bits_per_weight(p) / 8
    if p["peak_tflops"] is None and p["peak_fp8_tflops"] is None:
        return "— : no peak compute given, so only the memory time is known"
    if bytes_per_weight <= 1 and p["peak_fp8_tflops"] is not None:
        return f"{shown}: the FP8 peak, for weights of {typed(bytes_per_weight, 'B')} (1 byte or fewer)"
    if p["peak_tflops"] is None:
        return (
            f"— : weights of {typed(bytes_per_weight, 'B')} run at the BF16 rate, and no BF16 peak is given"
        )
    return f"{shown}: the BF16 peak, for weights of {typed(bytes_per_weight, 'B')}"


def model_outputs(p: Params) -> dict[str, float]:
    """The sizes a decode step used, typed or the chosen model's (settings already filled)."""
    return {
        "params_used_b": p["params_b"],
        "active_params_used_b": active_b(p),
        "kv_bytes_per_token_used": p["kv_bytes_per_token"],
    }


def model_formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    """How the sizes a decode step used were found; ``p`` as entered, before the model fills it."""
    if not model_chosen(p):
        active = "as typed" if p["active_params_b"] is not None else "all of them (none typed)"
        return {
            "params_used_b": f"{out('params_used_b')}: as typed",
            "active_params_used_b": f"{out('active_params_used_b')}: {active}",
            "kv_bytes_per_token_used": kv_per_token_formula(p, out("kv_bytes_per_token_used")),
        }
    name = model_name(p)
    return {
        "params_used_b": f"{out('params_used_b')}: every weight of {name}, counted from its shape",
        "active_params_used_b": (
            f"{out('active_params_used_b')}: the weights one token goes through in {name} (of a "
            "mixture of experts, only the experts it is routed to; of the input embedding table, one row)"
        ),
        "kv_bytes_per_token_used": kv_per_token_formula(p, out("kv_bytes_per_token_used")),
    }


MODEL_OUTPUTS = (
    OutputSpec("params_used_b", "B", "parameters (the model's own when one is chosen)"),
    OutputSpec("active_params_used_b", "B", "parameters read per token"),
    OutputSpec("kv_bytes_per_token_used", "B", "KV cache bytes per token of this context"),
)


IMPOSSIBLE = (
    "impossible at these settings: faster than memory can deliver the bytes. Likely causes: a "
    "smaller model or file than entered, an MoE reading only its active experts (give active "
    "parameters), speculative decoding (several tokens per step), or more bandwidth than entered"
)


def measured_check(p: Params, ceiling: float | None) -> str | None:
    """What a measured speed says beside the ceiling; None without one."""
    measured = p["measured_tok_s"]
    if measured is None:
        return None
    if ceiling is None:
        return "the settings do not fit in memory, so there is no ceiling to compare with"
    return IMPOSSIBLE if measured > ceiling else "possible: at or under the ceiling"


def _weights_formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    """How the weights' size, the bytes of them a step reads and their bits were found; ``p`` with
    the model's sizes."""
    model = (
        f"{out('model_gb')}: the file's size, as given"
        if p["model_gb"] is not None
        else f"{out('model_gb')} = {typed(p['params_b'])} × 10⁹ weights × {out('bits_per_weight')} ÷ 8"
    )
    published = published_weights(p)
    if published is not None and p["model_gb"] is None:
        model = (
            f"{out('model_gb')}: the published file, each tensor at its stored precision ({model_name(p)})"
        )
    weights = (
        (
            f"{out('gb_per_token')} = {out('model_gb')} × {typed(round(weights_read_b(p, active_b(p)), 4))} read "
            f"(every expert the batch touches: E × (1 − (1 − k/E)^batch) a layer) ÷ {typed(p['params_b'])} × 10⁹ weights"
            if weights_read_b(p, active_b(p)) != active_b(p)
            else f"{out('gb_per_token')} = {out('model_gb')} × {typed(p['active_params_b'])} active ÷ {typed(p['params_b'])} × 10⁹ weights"
        )
        if p["active_params_b"] is not None
        else f"{out('gb_per_token')} = the whole model, read once per step"
    )
    if published is not None:
        weights = (
            f"{out('gb_per_token')} = the weights a token reads (attention, router, output head, "
            f"and the experts it is routed to), each at its stored precision ({model_name(p)})"
        )
    return {
        "model_gb": model,
        "gb_per_token": weights,
        "bits_per_weight": (
            f"{out('bits_per_weight')}: as given"
            if p["bits_per_weight"] is not None
            else f"{out('bits_per_weight')} = the published file's bits ÷ {typed(p['params_b'])} × 10⁹ weights"
            if published is not None
            else f"{out('bits_per_weight')}: {QUANT_LABELS[p['quant']]}"
        ),
    }


def _ceiling_formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    """How each ceiling, the time a step takes and what binds it were found; ``p`` with the
    model's sizes."""
    bandwidth = typed(p["bandwidth_gbs"], "GB/s")
    fits = out("fits") == "yes"
    no_room = f"does not fit: needs {out('memory_needed_gb')} of {out('usable_gb')}"
    has_peak = out("bound") != "—"
    if not fits:
        ceiling = f"— : {no_room}"
    elif has_peak:
        ceiling = (
            f"{out('ceiling_tok_s')} = the lower of {out('memory_ceiling_tok_s')} (bandwidth) and "
            f"{out('compute_ceiling_tok_s')} (compute)"
        )
    else:
        ceiling = f"{out('ceiling_tok_s')} = {bandwidth} ÷ {out('gb_per_step')}"
    flop = f"2 × {typed(active_b(p))} × 10⁹ weights × {counted(p['batch'], 'sequence')}"
    peak = out("peak_tflops_used")
    return {
        "ceiling_tok_s": ceiling,
        "total_tok_s": f"{out('total_tok_s')} = {out('ceiling_tok_s')} × {counted(p['batch'], 'sequence')}"
        if fits
        else f"— : {no_room}",
        "expected_low_tok_s": f"{out('expected_low_tok_s')} = {out('ceiling_tok_s')} × {typed(p['efficiency_low'])}",
        "expected_high_tok_s": f"{out('expected_high_tok_s')} = {out('ceiling_tok_s')} × {typed(p['efficiency_high'])}",
        "ms_per_token": (
            f"{out('ms_per_token')} = 1,000 × max({out('gb_per_step')} ÷ {bandwidth}, {flop} ÷ {peak})"
            if has_peak
            else f"{out('ms_per_token')} = 1,000 × {out('gb_per_step')} ÷ {bandwidth}"
        ),
        "memory_ceiling_tok_s": (
            f"{out('memory_ceiling_tok_s')} = {bandwidth} ÷ {out('gb_per_step')}"
            if fits
            else f"— : {no_room}"
        ),
        "compute_ceiling_tok_s": (
            f"{out('compute_ceiling_tok_s')} = {peak} ÷ ({flop})"
            if has_peak and fits
            else ("— : no peak compute given" if fits else f"— : {no_room}")
        ),
        "bound": (
            f"{out('bound')}: memory time {out('gb_per_step')} ÷ {bandwidth} against compute time {flop} ÷ {peak}"
            if has_peak
            else "— : no peak compute given, so only the bandwidth's ceiling is known"
        ),
        "peak_tflops_used": peak_formula(p, peak),
    }


def _memory_formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    """How the memory the settings need, the memory there is and the largest model and batch
    that fit were found; ``p`` with the model's sizes."""
    fits = out("fits") == "yes"
    return {
        "usable_gb": f"{out('usable_gb')} = {typed(p['memory_utilization'])} × {typed(p['ram_gb'], 'GB')}",
        "largest_model_b": (
            f"{out('largest_model_b')} = ({out('usable_gb')} − {typed(p['overhead_gb'], 'GB')} overhead − "
            f"{out('kv_gb_per_step')} KV) ÷ ({out('bits_per_weight')} ÷ 8)"
        ),
        "memory_needed_gb": (
            f"{out('memory_needed_gb')} = {out('model_gb')} weights + {out('kv_gb_per_step')} KV + "
            f"{typed(p['overhead_gb'], 'GB')} overhead"
        ),
        "fits": f"{out('fits')}: {out('memory_needed_gb')} {'≤' if fits else '>'} {out('usable_gb')}",
        "largest_batch": (
            "— : at context 0 no KV is kept, so memory sets no limit on the batch"
            if p["context_tokens"] == 0
            else f"{out('largest_batch')} = ⌊({out('usable_gb')} − {out('model_gb')} − {typed(p['overhead_gb'], 'GB')}) ÷ "
            f"({counted(p['context_tokens'], 'token')} × {typed(p['kv_bytes_per_token'], 'B')})⌋"
        ),
    }


def _formulas(p: Params, out: Callable[[str], str]) -> dict[str, str]:
    entered, p = p, with_model_sizes(p)
    kv = f"{counted(p['batch'], 'sequence')} × {counted(p['context_tokens'], 'token')} × {typed(p['kv_bytes_per_token'], 'B')}"
    measured = p["measured_tok_s"]
    return {
        **_weights_formulas(p, out),
        "kv_gb_per_step": f"{out('kv_gb_per_step')} = {kv} ÷ 10⁹",
        "gb_per_step": f"{out('gb_per_step')} = {out('gb_per_token')} + {out('kv_gb_per_step')}",
        "kv_share_pct": f"{out('kv_share_pct')} = {out('kv_gb_per_step')} ÷ {out('gb_per_step')}",
        **_ceiling_formulas(p, out),
        "efficiency_pct": (
            "— : no measured speed given"
            if measured is None
            else f"{out('efficiency_pct')} = {typed(measured, 'tok/s')} ÷ {out('ceiling_tok_s')}"
        ),
        "measured_check": "—" if measured is None else out("measured_check"),
        **_memory_formulas(p, out),
        **model_formulas(entered, out),
    }


# Lesson 04 (llama-bench tg128, M4 Max 546 GB/s): decode speed by quantization, and its file size.
LESSON_04 = "llama-bench tg128 on an M4 Max, 546 GB/s (lesson 04)"
_RUN = measurement("l04-m4-max-llama8b").values
LESSON_04_RUNS = (
    ("q8_0", 8.5, _RUN["q8_0_tg128"]),
    ("q4_k_m", 4.9, _RUN["q4_k_m_tg128"]),
    ("q3_k_m", 4.0, _RUN["q3_k_m_tg128"]),
)


def _measured(p: Params) -> list[Measured]:
    if model_chosen(p):
        return []  # lesson 04's runs are of the typed 8B model's files
    if p["bandwidth_gbs"] != 546 or p["params_b"] != 8 or p["active_params_b"] is not None:
        return []
    return [
        Measured(
            f"{quant.upper()} decode ({gb:g} GB file)",
            tok_s,
            "tok/s",
            LESSON_04,
            CALCULATOR.compute_with("ceiling_tok_s", p, model_gb=gb, bits_per_weight=None, quant=quant),
            x=QUANT_BITS[quant],
        )
        for quant, gb, tok_s in LESSON_04_RUNS
    ]


def _chart(p: Params, measured: Sequence[Series]) -> Figure:
    p = with_measured(p, CALCULATOR.params)  # checked in _check: never raises here
    xs = evenly(16.0, 56, 2.0)
    # The bandwidth's ceiling at every point, fitting or not: the chart shows the physics.
    ceilings = [
        p["bandwidth_gbs"] / CALCULATOR.compute_with("gb_per_step", p, bits_per_weight=x, model_gb=None)
        for x in xs
    ]
    result = CALCULATOR.run(p)
    bits = result.value("bits_per_weight")
    data = [
        line("ceiling", xs, ceilings, BLUE),
        dashed(
            f"{p['efficiency_high']:.0%} of it",
            xs,
            [c * p["efficiency_high"] for c in ceilings],
            GREEN,
            1.5,
            "dot",
        ),
        dashed(
            f"{p['efficiency_low']:.0%} of it",
            xs,
            [c * p["efficiency_low"] for c in ceilings],
            GREEN,
            1.5,
            "dot",
        ),
        these_settings(bits, p["bandwidth_gbs"] / result.value("gb_per_step")),
    ]
    if rows := _measured(p):
        data.append(points(f"measured: {LESSON_04}", [r.x for r in rows], [r.measured for r in rows], ORANGE))
    if p["measured_tok_s"] is not None:
        data.append(points("your measurement", [bits], [p["measured_tok_s"]], RED, "x"))
    return {"data": data, "layout": layout("bits per weight", "decode tokens per second")}


CALCULATOR = Calculator(
    name="decode-ceiling",
    order=30,
    title="Decode ceiling: the bandwidth wall",
    lessons=("00", "04", "12"),
    meaning=(
        "Each new token reads every active weight and its conversation's KV cache from memory, so "
        "no server can type faster than bandwidth ÷ bytes per step; a healthy one reaches 60–85% "
        "of that ceiling, and longer conversations lower it."
    ),
    params=(
        MODEL,
        MODEL_CONFIG,
        BANDWIDTH_GBS,
        PARAMS_B,
        ACTIVE_PARAMS_B,
        Param(
            "quant",
            "choice",
            "q4_k_m",
            "The quantization, which sets the bits per weight; 'as published': a chosen model's own "
            "file, each tensor at its stored precision (gpt-oss: MXFP4 experts, BF16 the rest).",
            label="quantization",
            choices=QUANT_LABELS,
        ),
        Param(
            "bits_per_weight",
            "float",
            None,
            "Bits per weight, scales included; empty = the quantization's.",
            "bits",
            low=1,
            high=32,
            optional=True,
        ),
        Param(
            "model_gb",
            "float",
            None,
            "The model file's real size, if known (Llama-3.1-8B Q4_K_M: 4.9); empty = params × bits ÷ 8.",
            "GB",
            label="model file size",
            low=0.001,
            high=1_000_000,
            optional=True,
        ),
        Param(
            "efficiency_low",
            "float",
            0.60,
            "Lower end of the share of the ceiling a real server reaches.",
            low=0,
            low_open=True,
            high=1,
        ),
        Param(
            "efficiency_high",
            "float",
            0.85,
            "Upper end of the share of the ceiling a real server reaches.",
            low=0,
            low_open=True,
            high=1,
        ),
        Param(
            "measured_tok_s",
            "float",
            None,
            "A measured decode speed (llama-bench tg128) to compare with the ceiling; empty = none.",
            "tok/s",
            label="measured speed",
            low=0,
            low_open=True,
            high=1_000_000,
            optional=True,
        ),
        Param(
            "ram_gb",
            "float",
            36.0,
            "Memory of the machine or GPU (the course's Mac, an M4 Max: 36 GB unified memory).",
            "GB",
            label="memory",
            low=0,
            low_open=True,
            high=1_000_000,
        ),
        replace(
            MEMORY_UTILIZATION,
            default=USABLE_SHARE,
            help="Share of the memory weights and KV may use: lesson 00's 70% on a Mac; vLLM's 0.9 on a GPU.",
        ),
        replace(
            OVERHEAD_GB,
            default=0.0,
            help="Memory besides weights and KV (on a GPU: activations, the runtime).",
        ),
        BATCH,
        CONTEXT_TOKENS,
        KV_BYTES_PER_TOKEN,
        KV_DTYPE,
        PEAK_TFLOPS,
        PEAK_FP8_TFLOPS,
        MEASURED_CALIBRATION,
    ),
    outputs=(
        OutputSpec("model_gb", "GB", "model size"),
        OutputSpec("gb_per_token", "GB", "weights read per step"),
        OutputSpec("kv_gb_per_step", "GB", "KV cache read per step, every sequence"),
        OutputSpec("gb_per_step", "GB", "bytes read per step"),
        OutputSpec("kv_share_pct", "%", "KV cache's share of the bytes"),
        OutputSpec("ceiling_tok_s", "tok/s", "decode ceiling, each sequence (empty when it does not fit)"),
        OutputSpec("total_tok_s", "tok/s", "decode ceiling, whole batch"),
        OutputSpec("expected_low_tok_s", "tok/s", "expected, low end"),
        OutputSpec("expected_high_tok_s", "tok/s", "expected, high end"),
        OutputSpec("ms_per_token", "ms", "fastest time per token"),
        OutputSpec("bits_per_weight", "bits", "bits per weight used"),
        OutputSpec("efficiency_pct", "%", "measured ÷ ceiling (empty without a measured speed)"),
        OutputSpec("measured_check", "", "what the measured speed says"),
        OutputSpec("usable_gb", "GB", "memory for weights and KV cache (the memory share of it)"),
        OutputSpec("largest_model_b", "B", "largest model that fits at these bits, beside this KV"),
        OutputSpec("memory_needed_gb", "GB", "memory needed: weights + KV + overhead"),
        OutputSpec("fits", "", "fits in memory"),
        OutputSpec(
            "largest_batch", "sequences", "largest batch that fits at this context (empty at context 0)"
        ),
        OutputSpec("memory_ceiling_tok_s", "tok/s", "bandwidth's ceiling, each sequence"),
        OutputSpec(
            "compute_ceiling_tok_s", "tok/s", "compute's ceiling, each sequence (empty without a peak)"
        ),
        OutputSpec("bound", "", "the limit (empty without a peak compute)"),
        OutputSpec("peak_tflops_used", "TFLOP/s", "peak compute at the weights' precision"),
        *MODEL_OUTPUTS,
    ),
    compute=_compute,
    check=_check,
    formulas=_formulas,
    chart=_chart,
    chart_description="Decode ceiling against bits per weight, with the 60–85% band real servers reach.",
    measured=_measured,
    examples=(
        WorkedExample(
            "lesson 04: 546 GB/s (M4 Max, 40-core GPU) ÷ 4.9 GB = 111.4 tok/s",
            {"bandwidth_gbs": "546", "model_gb": "4.9"},
            "ceiling_tok_s",
            "111.4 tok/s",
        ),
        WorkedExample(
            "lesson 00: 410 GB/s (the course's 36 GB M4 Max) ÷ 4.9 GB = 83.7 tok/s",
            {"bandwidth_gbs": "410", "model_gb": "4.9"},
            "ceiling_tok_s",
            "83.7 tok/s",
        ),
    ),
    note="The course's ceilings use the model *files'* sizes (Q4_K_M 8B ≈ 4.9 GB, Q8_0 8.5, "
    "Q3_K_M 4.0), not params × bits ÷ 8 (8 × 4.8 ÷ 8 = 4.8 GB → 113.8 tok/s at 546 GB/s): to "
    "reproduce 546 ÷ 4.9 = 111.4, give `model_gb: 4.9`. `bits_per_weight`, when given, wins "
    "over `quant`.",
)

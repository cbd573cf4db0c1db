"""Charts for the calculator pages, where a curve teaches something, and the course's measurements.

Figures are plain plotly JSON (dicts), built without importing plotly: a page draws them with
static/js/plots.js, which themes text and grid colours. Pure Python, no Django.

``MEASURED`` holds the course's published measurements (each lesson's, by number): they are quoted, never
computed, and each says where it was measured. A page draws them beside the model only when the
settings match the ones they were measured at.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..engine.calculator import Params, Result
from ..engine.calculators import CALCULATORS
from ..engine.calculators.decode_ceiling import QUANT_BITS
from ..engine.calculators.kv_cache import KV_DTYPE_BYTES
from ..engine.calculators.speculative import speedup

BLUE, ORANGE, GREEN, RED, GREY, PURPLE = "#3b7dd8", "#e07b1a", "#2e9e5b", "#d64541", "#8a8f98", "#8e5bd0"


@dataclass(frozen=True)
class Measured:
    """A number the course published from a real run, with the model's value beside it."""

    what: str
    measured: float
    unit: str
    where: str
    model: float | None = None
    x: float | None = None  # where the chart draws it


@dataclass(frozen=True)
class Series:
    """A run measured elsewhere (e.g. against the practice server), drawn over a chart's model curve.

    ``curve`` names the model curve it measures, if the chart has several (the prefix-cache
    chart: ``cold``, ``shared-first``, ``variable-first``): its points take that curve's colour.
    """

    label: str
    x: Sequence[float]
    y: Sequence[float]
    curve: str = ""


def _layout(x_title: str, y_title: str, **extra) -> dict:
    layout = {
        "height": 380,
        "margin": {"l": 60, "r": 24, "t": 24, "b": 52},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0, "font": {"size": 11}},
        "hovermode": "closest",
        "font": {"size": 12},
    }
    layout.update(extra)
    return layout


def _line(name: str, x: Sequence[float], y: Sequence[float], colour: str, **extra) -> dict:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": list(x),
        "y": list(y),
        "line": {"color": colour, "width": 2.5},
        **extra,
    }


def _points(
    name: str, x: Sequence[float], y: Sequence[float], colour: str, symbol: str = "diamond-open"
) -> dict:
    marker = {"color": colour, "size": 12, "symbol": symbol, "line": {"width": 2, "color": colour}}
    return {"type": "scatter", "mode": "markers", "name": name, "x": list(x), "y": list(y), "marker": marker}


def _you(x: float, y: float) -> dict:
    return _points("these settings", [x], [y], GREY, "circle")


def _range(high: float, steps: int = 60, low: float = 0.0) -> list[float]:
    return [low + (high - low) * i / steps for i in range(steps + 1)]


def _run(name: str, params: Params, **changes) -> Result:
    return CALCULATORS[name].run({**params, **changes})


def _value(name: str, key: str, params: Params, **changes) -> float:
    """One output for settings already validated, varied along a chart's axis within the declared
    ranges: the compute function alone, since validating every point would cost more than the curve."""
    return CALCULATORS[name].compute({**params, **changes})[key]


# --------------------------------------------------------------------------- the course's measurements

# Lesson 01 (Ollama, llama3.1:8b on the course's Mac): TTFT p50 by prompt length.
LESSON_01 = "Ollama, llama3.1:8b, on the course's Mac (lesson 01)"
# Lesson 04 (llama-bench tg128, M4 Max 546 GB/s): decode speed by quantization, and its file size.
LESSON_04 = "llama-bench tg128 on an M4 Max, 546 GB/s (lesson 04)"
LESSON_04_RUNS = (("q8_0", 8.5, 52.0), ("q4_k_m", 4.9, 86.0), ("q3_k_m", 4.0, 98.0))
# Lesson 13 (llama.cpp: Llama-3.1-8B Q4_K_M target, Llama-3.2-1B draft, up to 8 drafted tokens).
LESSON_13 = "llama.cpp, 8B target and 1B draft, up to 8 drafted tokens (lesson 13)"
# The speed-ups as the course states them (118 ÷ 62.0 and 70 ÷ 61.5 tok/s).
LESSON_13_RUNS = (("structured text", 0.78, 1.9), ("prose", 0.41, 1.14))
# Lesson 05: llama.cpp's reported KV allocation for Llama-3.1-8B, MiB by context (f16, q8_0).
LESSON_05 = "llama.cpp's KV allocation log, Llama-3.1-8B (lesson 05)"
LESSON_05_RUNS = ((4096, 512, 272), (32768, 4096, 2176), (131072, 16384, 8704))
LLAMA_8B_KV = {"layers": 32, "kv_heads": 8, "head_dim": 128}


def measured_beside(name: str, params: Params) -> list[Measured]:
    """The course's published measurements that apply at these settings, with the model's values."""
    if name == "prefill" and params["overhead_ms"] == 15 and params["prefill_tok_s"] == 2500:
        return [
            Measured(
                f"TTFT p50, {tokens:,}-token prompt",
                ms,
                "ms",
                LESSON_01,
                _run(name, params, prompt_tokens=tokens, cached_tokens=0).value("ttft_ms"),
            )
            for tokens, ms in ((12, 145.0), (8000, 4210.0))
        ]
    if (
        name == "decode-ceiling"
        and params["bandwidth_gbs"] == 546
        and params["params_b"] == 8
        and params["active_params_b"] is None
    ):
        return [
            Measured(
                f"{quant.upper()} decode ({gb:g} GB file)",
                tok_s,
                "tok/s",
                LESSON_04,
                _value(name, "ceiling_tok_s", params, model_gb=gb, bits_per_weight=None, quant=quant),
                x=QUANT_BITS[quant],
            )
            for quant, gb, tok_s in LESSON_04_RUNS
        ]
    # Measured with up to 8 drafted tokens: beside the k = 8 curve, which the chart always draws.
    if name == "speculative" and params["draft_cost"] == 0.1 and params["verify_cost"] == 0.1:
        return [
            Measured(
                f"speed-up at k 8, {kind}, α {alpha:g}", gain, "×", LESSON_13, speedup(alpha, 8, 0.1), x=alpha
            )
            for kind, alpha, gain in LESSON_13_RUNS
        ]
    if name == "kv-cache" and all(params[key] == value for key, value in LLAMA_8B_KV.items()):
        rows = []
        for tokens, f16, q8 in LESSON_05_RUNS:
            for dtype, mib in (("f16", f16), ("q8_0", q8)):
                model = _run(name, params, context_tokens=tokens, kv_dtype=dtype).value(
                    "kv_mib_per_conversation"
                )
                rows.append(Measured(f"{tokens:,} tokens, {dtype}", mib, "MiB", LESSON_05, model))
        return rows
    return []


# --------------------------------------------------------------------------- charts


def _prefill(params: Params, measured: Sequence[Series]) -> dict:
    top = max(16_000, params["prompt_tokens"] * 1.5)
    xs = _range(top)
    cold = [params["overhead_ms"] + x / params["prefill_tok_s"] * 1000 for x in xs]
    warm = [
        params["overhead_ms"] + max(0.0, x - params["cached_tokens"]) / params["prefill_tok_s"] * 1000
        for x in xs
    ]
    data = [_line("nothing cached", xs, cold, BLUE)]
    if params["cached_tokens"]:
        data.append(_line(f"first {params['cached_tokens']:,} tokens cached", xs, warm, GREEN))
    data.append(_you(params["prompt_tokens"], _run("prefill", params).value("ttft_ms")))
    if rows := measured_beside("prefill", params):
        data.append(
            _points(f"measured: {LESSON_01}", [r.x for r in rows], [r.measured for r in rows], ORANGE)
        )
    data += [_points(f"measured: {s.label}", s.x, s.y, PURPLE, "x-thin-open") for s in measured]
    return {"data": data, "layout": _layout("prompt tokens", "time to first token (ms)")}


def _prefix_cache(params: Params, measured: Sequence[Series]) -> dict:
    # TTFT of a repeat against the shared part's length, the variable part kept as set.
    # Half as far again as the setting, but never past the declared maximum the points are run at.
    top = min(
        max(24_000, params["prefix_chars"] * 1.5), CALCULATORS["prefix-cache"].param("prefix_chars").high
    )
    xs = _range(top, 80)
    warm, variable_first, cold = [], [], []
    for x in xs:
        shared = _run("prefix-cache", params, prefix_chars=int(x), order="shared-first")
        warm.append(shared.value("ttft_warm_ms"))
        cold.append(shared.value("ttft_cold_ms"))
        variable_first.append(
            _run("prefix-cache", params, prefix_chars=int(x), order="variable-first").value("ttft_warm_ms")
        )
    data = [
        _line("first request (cold)", xs, cold, BLUE),
        _line(
            "repeat, variable part first",
            xs,
            variable_first,
            RED,
            line={"color": RED, "width": 2, "dash": "dash"},
        ),
        _line("repeat, shared part first", xs, warm, GREEN),
    ]
    result = _run("prefix-cache", params)
    data.append(_you(params["prefix_chars"], result.value("ttft_warm_ms")))
    # The practice server's measured runs (felab_sim/prefix_runs.py): x in shared characters,
    # each point in the colour of the curve it measures.
    colours = {"cold": BLUE, "shared-first": GREEN, "variable-first": RED}
    data += [
        _points(f"measured: {s.label}", s.x, s.y, colours.get(s.curve, PURPLE), "x-thin-open")
        for s in measured
    ]
    return {
        "data": data,
        "layout": _layout("characters repeated by every request", "time to first token (ms)"),
    }


def _decode_ceiling(params: Params, measured: Sequence[Series]) -> dict:
    xs = _range(16.0, 56, 2.0)
    ceilings = [
        _run("decode-ceiling", params, bits_per_weight=x, model_gb=None).value("ceiling_tok_s") for x in xs
    ]
    low = [c * params["efficiency_low"] for c in ceilings]
    high = [c * params["efficiency_high"] for c in ceilings]
    data = [
        _line("ceiling", xs, ceilings, BLUE),
        _line(
            f"{params['efficiency_high']:.0%} of it",
            xs,
            high,
            GREEN,
            line={"color": GREEN, "width": 1.5, "dash": "dot"},
        ),
        _line(
            f"{params['efficiency_low']:.0%} of it",
            xs,
            low,
            GREEN,
            line={"color": GREEN, "width": 1.5, "dash": "dot"},
        ),
    ]
    result = _run("decode-ceiling", params)
    data.append(_you(result.value("bits_per_weight"), result.value("ceiling_tok_s")))
    rows = measured_beside("decode-ceiling", params)
    if rows:
        data.append(
            _points(
                f"measured: {LESSON_04}",
                [
                    bits
                    for _, bits in (
                        (r, QUANT_BITS[q]) for r, (q, _, _) in zip(rows, LESSON_04_RUNS, strict=True)
                    )
                ],
                [r.measured for r in rows],
                ORANGE,
            )
        )
    return {"data": data, "layout": _layout("bits per weight", "decode tokens per second")}


def _kv_cache(params: Params, measured: Sequence[Series]) -> dict:
    contexts = [2**n for n in range(10, 18)]
    data = []
    colours = {"f16": BLUE, "q8_0": GREEN, "fp8": ORANGE, "q4_0": PURPLE}
    for dtype in KV_DTYPE_BYTES:
        gb = [
            _run("kv-cache", params, context_tokens=c, kv_dtype=dtype).value("kv_gb_total") for c in contexts
        ]
        data.append(
            _line(
                f"{dtype}, {params['users']} user{'s' if params['users'] > 1 else ''}",
                contexts,
                gb,
                colours[dtype],
            )
        )
    data.append(
        _line(
            "free memory",
            [contexts[0], contexts[-1]],
            [params["free_gb"]] * 2,
            RED,
            line={"color": RED, "width": 1.5, "dash": "dash"},
        )
    )
    result = _run("kv-cache", params)
    data.append(_you(params["context_tokens"], result.value("kv_gb_total")))
    if params["users"] == 1 and (rows := measured_beside("kv-cache", params)):
        gb = [r.measured * 2**20 / 1e9 for r in rows]
        data.append(_points("measured (lesson 05)", [r.x for r in rows], gb, GREY, "x-thin-open"))
    layout = _layout("context tokens per conversation (log)", "KV cache (GB)")
    layout["xaxis"].update(
        {"type": "log", "tickvals": contexts, "ticktext": [f"{c // 1024}k" for c in contexts]}
    )
    return {"data": data, "layout": layout}


def _speculative(params: Params, measured: Sequence[Series]) -> dict:
    xs = _range(1.0, 50)
    data = []
    colours = {2: GREEN, 4: BLUE, 8: PURPLE}
    for k in sorted({2, 4, 8, params["draft_tokens"]}):
        ys = [speedup(a, k, params["draft_cost"], params["verify_cost"]) for a in xs]
        data.append(_line(f"k = {k}", xs, ys, colours.get(k, ORANGE)))
    data.append(_line("no gain (1×)", [0, 1], [1, 1], RED, line={"color": RED, "width": 1, "dash": "dash"}))
    data.append(
        _you(
            params["acceptance"],
            speedup(
                params["acceptance"], params["draft_tokens"], params["draft_cost"], params["verify_cost"]
            ),
        )
    )
    if rows := measured_beside("speculative", params):
        data.append(
            _points(f"measured: {LESSON_13}", [r.x for r in rows], [r.measured for r in rows], ORANGE)
        )
    return {"data": data, "layout": _layout("acceptance α", "speed-up (×)")}


def _roofline(params: Params, measured: Sequence[Series]) -> dict:
    peak, bandwidth = params["peak_tflops"], params["bandwidth_gbs"] / 1000
    xs = [2 ** (n / 4) for n in range(-8, 60)]
    data = [_line("attainable TFLOP/s", xs, [min(peak, bandwidth * x) for x in xs], BLUE)]
    result = _run("roofline", params)
    data.append(_you(result.value("decode_flop_per_byte"), result.value("attainable_tflops")))
    layout = _layout("arithmetic intensity (FLOP per byte, log)", "TFLOP/s (log)")
    layout["xaxis"]["type"] = "log"
    layout["yaxis"] = {"title": {"text": "TFLOP/s (log)"}, "type": "log"}
    return {"data": data, "layout": layout}


def _sizing(params: Params, measured: Sequence[Series]) -> dict:
    result = _run("sizing", params)
    per_ticket, dedicated = result.value("usd_per_ticket"), result.value("dedicated_usd_month")
    top = max(params["tickets_per_month"] * 4, (result.value("crossover_tickets_month") or 0) * 2, 1000)
    xs = [top * i / 60 for i in range(61)]
    data = [
        _line("serverless", xs, [x * per_ticket for x in xs], BLUE),
        _line(
            f"dedicated, {result.value('replicas_with_headroom')} replicas",
            [0, top],
            [dedicated, dedicated],
            ORANGE,
        ),
        _you(params["tickets_per_month"], result.value("serverless_usd_month")),
    ]
    return {"data": data, "layout": _layout("tickets per month", "$ per month")}


def _cost(params: Params, measured: Sequence[Series]) -> dict:
    result = _run("cost", params)
    keys = (
        "usd_per_1k_tasks",
        "batch_usd_per_1k_tasks",
        "cached_usd_per_1k_tasks",
        "batch_cached_usd_per_1k_tasks",
    )
    names = ["list price", "batch", "cached input", "batch + cached"]
    bar = {
        "type": "bar",
        "x": names,
        "y": [result.value(key) for key in keys],
        "marker": {"color": [BLUE, GREEN, ORANGE, PURPLE]},
        "name": "$ per 1,000 tasks",
    }
    return {"data": [bar], "layout": _layout("", "$ per 1,000 tasks", showlegend=False)}


def _finetune_memory(params: Params, measured: Sequence[Series]) -> dict:
    names, values = [], []
    for method, label in (("full", "full"), ("lora", "LoRA"), ("dora", "DoRA"), ("qlora", "QLoRA")):
        names.append(label)
        values.append(_value("finetune-memory", "train_gb", params, method=method))
    bar = {
        "type": "bar",
        "x": names,
        "y": values,
        "marker": {"color": [RED, BLUE, PURPLE, GREEN]},
        "name": "GB to train",
    }
    return {"data": [bar], "layout": _layout("", "memory to train (GB)", showlegend=False)}


def _dpo(params: Params, measured: Sequence[Series]) -> dict:
    # Wide enough to show the loss flatten: |β × margin| up to about 5, and the set margin inside.
    span = max(5 / params["beta"], abs(params["margin"]) * 1.2)
    xs = _range(span, 80, -span)
    four_empty = {
        name: None
        for name in (
            "policy_chosen_logp",
            "reference_chosen_logp",
            "policy_rejected_logp",
            "reference_rejected_logp",
        )
    }
    curve = [CALCULATORS["dpo"].compute({**params, **four_empty, "margin": x}) for x in xs]
    losses = [point["loss"] for point in curve]
    weights = [point["gradient_weight"] for point in curve]
    fades = [point["fade"] for point in curve]
    result = _run("dpo", params)
    data = [
        _line("loss", xs, losses, BLUE),
        _line("gradient weight, β × fading factor", xs, weights, ORANGE),
        _line("fading factor σ(−β × margin)", xs, fades, GREEN),
        _you(result.value("margin"), result.value("loss")),
    ]
    return {"data": data, "layout": _layout(f"margin (nats; β = {params['beta']:g})", "loss, weight")}


CHARTS: dict[str, Callable[[Params, Sequence[Series]], dict]] = {
    "prefill": _prefill,
    "prefix-cache": _prefix_cache,
    "decode-ceiling": _decode_ceiling,
    "kv-cache": _kv_cache,
    "speculative": _speculative,
    "roofline": _roofline,
    "sizing": _sizing,
    "cost": _cost,
    "finetune-memory": _finetune_memory,
    "dpo": _dpo,
}

CHART_DESCRIPTIONS = {
    "prefill": "Time to first token against prompt length, with nothing cached and with the cached part skipped.",
    "prefix-cache": "Time to first token against the repeated part's length: first request, and repeats with the shared part first or last.",
    "decode-ceiling": "Decode ceiling against bits per weight, with the 60–85% band real servers reach.",
    "kv-cache": "KV cache gigabytes against context length for each cache type, beside the free memory.",
    "speculative": "Speed-up against acceptance for 2, 4 and 8 drafted tokens; below 1 speculation is slower.",
    "roofline": "Attainable compute against arithmetic intensity: the slope is the memory limit, the flat top the compute limit.",
    "sizing": "Monthly cost against tickets per month, serverless against dedicated.",
    "cost": "Dollars per 1,000 tasks at list price, batch, cached input, and both.",
    "finetune-memory": "Memory to train with each method, for this model.",
    "dpo": "DPO loss, gradient weight and its fading factor against the margin.",
}


def chart_json(name: str, result: Result, measured: Sequence[Series] = ()) -> str:
    """The calculator's chart as plotly JSON for static/js/plots.js."""
    return json.dumps(CHARTS[name](result.params, measured), separators=(",", ":"))

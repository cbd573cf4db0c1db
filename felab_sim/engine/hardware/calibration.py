"""Calibrations from measurements a person can name: what a GPU achieves against its spec sheet.

A calibration file is what ``tools/measure_gpu.py`` writes (one JSON object a line, ``kind``
saying what it is; the format of the H200's measurements in ``measured/h200.jsonl`` beside
this module). From it:

- **bandwidth**: the plain read (``bandwidth``, op read), else a weight matrix read by a matrix
  product at small batches (``knee`` rows with B ≤ 128: the product is memory-bound there);
- **FLOP/s**: the large matrix product at BF16 and FP8 (``gemm`` rows); a product of fewer rows
  (a prefill chunk, a large batch) gets less: the ``knee`` rows where the roofline says the
  product is compute-bound give its FLOP/s at their M (on the H200 662 TFLOP/s at 256 rows, 707
  at 512, 742 at 1,024: 0.83, 0.89, 0.93 of the 8192³ product's 797), a share of the large
  product's at each precision (:meth:`Calibration.matrix_share`);
- **attention's FLOP/s**: not measured; FlashAttention-2's published 35% of the H100's peak
  (:data:`ATTENTION_EFFICIENCY`), a prompt's P²/2 pairs at 4 × heads × head size FLOPs each;
- **a kernel's fixed cost**: an ``overhead`` row's graph of tiny kernels, its time ÷ its
  kernels, where the file has one; else the smallest batch's ``knee`` time beyond its bytes at
  the plain read bandwidth (on the H200 34.2 µs for 117 MB, 27.3 µs of it the bytes: 6.9 µs).

Each number is divided by the GPU's spec-sheet figure, so the file calibrates the preset it was
measured on, or a typed-in figure. GPUs without a measurement get one default: the measured
GPUs' ratios, said so; a number fitted on runs only where two or more runs back it
(:data:`FITTED_MEMORY_EFFICIENCY`). The serving engine's own cost a step (vLLM's scheduler and
sampler) is not the GPU's: :data:`VLLM_STEP_OVERHEAD_S`. ``decode`` and ``prefill`` rows are never read here:
they are what the model predicts (bench/bench_validation.py). Pure Python: no Django.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from ..core.params import Param, ParamError
from .hardware import GB, TERA, Hardware, hardware_preset
from .step_cost import Calibration

MEASURED = Path(__file__).resolve().parents[1] / "measured"
# The measured GPUs: preset name → the file measured on one of them.
MEASURED_FILES = {"h200": MEASURED / "h200.jsonl"}
# A matrix product of a batch up to this many rows is memory-bound on every GPU felab has
# (the H200's knee turns at about 200).
MEMORY_BOUND_ROWS = 128
# The rows of the gemm rows' square product (8192³): the large product every share is of.
LARGE_PRODUCT_ROWS = 8192.0
# No link was measured: the share of an interconnect's spec bandwidth a collective gets, stated.
LINK_EFFICIENCY = 0.75
# Attention's kernel: FlashAttention-2 (PyTorch's scaled_dot_product_attention flash kernel, and
# vLLM's attention on GPUs other than Hopper) reaches 35% of an H100's dense BF16 peak (Shah et
# al., "FlashAttention-3", arXiv:2407.08608, abstract). Not measured here: stated, for every GPU.
ATTENTION_EFFICIENCY = 0.35
# Numbers fitted on runs, each backed by two or more of LLMServingSim's three named vLLM runs, in
# one least-squares fit over every metric of all three (each error over its target), every other
# number held at its measured or default value (bench/bench_validation.py --fit reruns it):
# vLLM's own cost a step beside the GPU's (scheduling, sampling, Python between graph replays),
# backed by all three runs; and the RTX PRO 6000's memory efficiency, which no measurement
# gives, backed by its two runs (Llama-3.1-8B, and Qwen3-30B-A3B on two of them).
VLLM_STEP_OVERHEAD_S = 0.0
FITTED_MEMORY_EFFICIENCY = {"rtx-pro-6000": 0.60}
FITTED_ON = "LLMServingSim's RTXPRO6000/Llama-3.1-8B and RTXPRO6000/Qwen3-30B-A3B-Instruct-2507 runs together"
# Fitted on the published serving runs a fit may see (serving_runs.runs(group="fit")), each a
# least-squares fit of the decode step (at the run's concurrency and mean context, with its
# prompts' prefills spread over its output tokens) against the run's mean TPOT, every other
# number at its measured or stated value:
# - a small kernel's fixed cost in a CUDA graph (a norm, rotary, the cache write, top-k, an
#   activation or its quantizing: layer_kernels counts them), beside a matrix product's measured
#   tail: backed by the 17 NVIDIA runs there (InferenceX's concurrency-16 gpt-oss-120b runs on
#   H100, H200 and B200 and DeepSeek-R1 runs on H200 and B200, 1k/1k, 1k/8k and 8k/1k each; NIM's
#   Llama-3.3-70B runs at concurrency 5 and 50);
# - how fast a part without FP4 tensor cores unpacks MXFP4 weights to BF16: backed by the six
#   Hopper gpt-oss-120b runs (H100 and H200, the three length pairs each), whose TPOTs are within
#   6% of each other, length pair by length pair, though the H200 reads 1.43 × as fast: the unpacking, not the reading, binds;
# - the MI300X's kernels' fixed costs under ROCm, as a multiple of the CUDA figures above: backed
#   by InferenceX's three concurrency-16 DeepSeek-R1 runs on MI300X (SGLang 0.5.5.post3).
# And on the same runs' TTFT, jointly with vLLM's two costs a request (servers.py;
# serving_validation.fit_front_end, ``bench/bench_validation.py --fit-serving``):
# - a grouped product of MXFP4 experts' FLOP/s as a share of a BF16 product's of the same rows:
#   backed by the nine gpt-oss-120b runs on H100, H200 and B200, whose median TTFT grows with the
#   prompt 2.3 (B200) to 3.2 (H100, H200) times as fast as a prefill step at the BF16 rate grows
#   (the 8k1k run against the 1k1k run at concurrency 4 and at 16, steps of mean prompts); grid 1
#   to 0.15. A factor for whatever that prefill costs beyond the step's parts, not a timed
#   kernel: one share for both kinds of GPU leaves B200's long prompts priced slow. The
#   unpacking above was fitted before it, on decode steps, where the grouped products' few rows
#   cost little beside the unpacking.
SMALL_KERNEL_LATENCY_S = 2.2e-6
DEQUANT_WEIGHTS_PER_S = 4.0e12
FOUR_BIT_GROUPED_SHARE = 0.2
FITTED_KERNEL_SCALE = {"mi300x": 3.4}
SERVING_FIT_ON = "the published serving runs a fit may see (felab_sim/engine/measured/serving_split.csv)"


class CalibrationError(ValueError):
    """A calibration file that cannot be read, with the line and what is wrong."""


def read_rows(text: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as error:
            raise CalibrationError(f"line {number} is not JSON ({error})") from None
        except RecursionError:  # brackets nested past Python's stack, as the config reader refuses
            raise CalibrationError(f"line {number} is nested too deeply to read") from None
        if not isinstance(row, dict) or not isinstance(row.get("kind"), str):
            raise CalibrationError(f"line {number} has no kind")
        rows.append(row)
    return rows


# Each figure a row gives, held to the bounds of the typed field it stands for (memory bandwidth
# 0.1 to 100,000 GB/s, peak 0.001 to 1,000,000 TFLOP/s, as the calculators declare them), and the
# counts and times to what a measurement can be: every reader of a calibration (ceilings, prefill,
# step time, continuous batching, the engine) divides by these, and a figure such as 5e-324 is
# above zero yet turns a quotient into zero or infinity.
FIGURE_BOUNDS: dict[str, tuple[float, float, str]] = {
    "gbs": (0.1, 100_000, "GB/s, the memory bandwidth field's range"),
    "tflops": (0.001, 1_000_000, "TFLOP/s, the peak FLOP/s field's range"),
    "s": (1e-9, 3_600, "seconds"),
    "B": (1, 1e7, "rows"),
    "K": (1, 1e7, "columns"),
    "N": (1, 1e7, "columns"),
    "layers": (1, 1e6, "layers"),
    "kernels_per_layer": (1, 1e6, "kernels"),
}


def _number(row: dict[str, Any], key: str) -> float:
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e30:
        raise CalibrationError(f"a {row['kind']} row's {key} must be a positive number (got {value!r})")
    low, high, unit = FIGURE_BOUNDS[key]
    if not low <= value <= high:
        raise CalibrationError(
            f"a {row['kind']} row's {key} is outside its field's range: {low:g} to {high:,g} {unit} (got {value!r})"
        )
    return float(value)


def measured_figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The figures a calibration takes from measurement rows, in SI units; absent if unmeasured."""
    found: dict[str, float] = {}
    reads = [_number(r, "gbs") * GB for r in rows if r["kind"] == "bandwidth" and r.get("op") == "read"]
    if reads:
        found["read_bandwidth"] = max(reads)
    knee = [r for r in rows if r["kind"] == "knee" and "s" in r]
    small = [r for r in knee if _number(r, "B") <= MEMORY_BOUND_ROWS]
    if small:
        found["matrix_bandwidth"] = statistics.median(_number(r, "gbs") * GB for r in small)
        first = min(small, key=lambda r: r["B"])
        if reads:
            batch, k, n = (_number(first, key) for key in ("B", "K", "N"))
            read_s = 2 * (k * n + batch * k + batch * n) / found["read_bandwidth"]
            found["kernel_latency_s"] = max(0.0, _number(first, "s") - read_s)
    for dtype in ("bf16", "fp8"):
        products = [
            _number(r, "tflops") * TERA
            for r in rows
            if r["kind"] == "gemm" and r.get("dtype") == dtype and "tflops" in r
        ]
        if products:
            found[f"{dtype}_flops"] = max(products)
    found.update(_matrix_rows(knee, found.get("read_bandwidth"), found.get("bf16_flops")))
    # A graph of tiny kernels measures a kernel's fixed cost directly, where the file has one.
    launched = [
        _number(r, "s") / (_number(r, "layers") * _number(r, "kernels_per_layer"))
        for r in rows
        if r["kind"] == "overhead" and "s" in r
    ]
    if launched:
        found["kernel_latency_s"] = statistics.median(launched)
    return found


def _matrix_rows(
    knee: list[dict[str, Any]], read_bandwidth: float | None, large: float | None
) -> dict[str, float]:
    """The knee's compute-bound rows (their FLOPs at the large product's FLOP/s take longer than
    their bytes at the read bandwidth: the roofline's right side) as ``rows_M`` → achieved FLOP/s."""
    if read_bandwidth is None or large is None:
        return {}
    rows = {}
    for r in knee:
        batch, k, n = (_number(r, key) for key in ("B", "K", "N"))
        flops, read = 2 * batch * k * n, 2 * (k * n + batch * k + batch * n)
        if flops / large > read / read_bandwidth:
            rows[f"rows_{batch:g}"] = flops / _number(r, "s")
    return rows


def matrix_rows(figures: Mapping[str, float]) -> tuple[tuple[float, float], ...]:
    """The measured compute-bound products of M rows as (M, FLOP/s ÷ the large product's), then the
    large product's own rows (8192) at 1: Calibration.matrix_share's table."""
    large = figures.get("bf16_flops")
    measured = sorted((float(key[5:]), value) for key, value in figures.items() if key.startswith("rows_"))
    if large is None or not measured:
        return ()
    return (
        *((m, min(1.0, value / large)) for m, value in measured if m < LARGE_PRODUCT_ROWS),
        (LARGE_PRODUCT_ROWS, 1.0),
    )


def from_measurements(rows: list[dict[str, Any]], hardware: Hardware, source: str) -> Calibration:
    """A calibration of ``hardware`` from its measurements; what was not measured is the default's."""
    figures = measured_figures(rows)
    base = default_calibration()
    # A matrix kernel's time is its fixed cost plus its bytes at the plain read's bandwidth (the
    # knee's smallest batch less that fixed cost): the two are counted apart.
    bandwidth = figures.get("read_bandwidth", figures.get("matrix_bandwidth"))
    changes: dict[str, Any] = {"source": source}
    if bandwidth is not None:
        changes["memory_efficiency"] = bandwidth / hardware.memory_bandwidth
    if "bf16_flops" in figures and hardware.bf16_flops:
        changes["compute_efficiency"] = figures["bf16_flops"] / hardware.bf16_flops
    if "fp8_flops" in figures and hardware.fp8_flops:
        changes["fp8_compute_efficiency"] = figures["fp8_flops"] / hardware.fp8_flops
    if "kernel_latency_s" in figures:
        changes["kernel_latency_s"] = figures["kernel_latency_s"]
    if matrix_rows(figures):
        changes["matrix_rows"] = matrix_rows(figures)
    changes["step_overhead_s"] = 0.0  # the GPU's: a serving engine adds its own (engine_calibration)
    return replace(base, **changes)


@cache
def measured_calibrations() -> dict[str, Calibration]:
    """Each measured GPU's calibration, from its file."""
    found = {}
    for name, path in MEASURED_FILES.items():
        rows = read_rows(path.read_text())
        found[name] = from_measurements(
            rows, hardware_preset(name), f"measured on an {hardware_preset(name).vendor_name}: {_where(path)}"
        )
    return found


def _where(path: Path) -> str:
    return f"felab_sim/engine/measured/{path.name} (tools/measure_gpu.py's format)"


@cache
def default_calibration() -> Calibration:
    """For a GPU nobody measured: the measured GPUs' ratios to their spec sheets (their mean)."""
    measured = []
    for name, path in MEASURED_FILES.items():
        hardware = hardware_preset(name)
        figures = measured_figures(read_rows(path.read_text()))
        measured.append(
            (
                figures["read_bandwidth"] / hardware.memory_bandwidth,
                figures["bf16_flops"] / (hardware.bf16_flops or 1),
                figures["fp8_flops"] / (hardware.fp8_flops or 1),
                figures["kernel_latency_s"],
            )
        )
    memory, compute, fp8, latency = (statistics.mean(column) for column in zip(*measured, strict=True))
    # A product of M rows' share of the large one: the first measured GPU's (one measured so far).
    first = next(iter(MEASURED_FILES.values()))
    rows = matrix_rows(measured_figures(read_rows(first.read_text())))
    names = ", ".join(hardware_preset(name).vendor_name for name in MEASURED_FILES)
    return Calibration(
        memory_efficiency=memory,
        compute_efficiency=compute,
        fp8_compute_efficiency=fp8,
        kernel_latency_s=latency,
        step_overhead_s=0.0,
        link_efficiency=LINK_EFFICIENCY,
        matrix_rows=rows,
        attention_efficiency=ATTENTION_EFFICIENCY,
        small_kernel_latency_s=SMALL_KERNEL_LATENCY_S,
        dequant_weights_per_s=DEQUANT_WEIGHTS_PER_S,
        four_bit_grouped_share=FOUR_BIT_GROUPED_SHARE,
        source=f"not measured: the default, the ratios to the spec sheet measured on the {names}",
    )


def gpu_calibration(hardware: Hardware, text: str | None = None) -> Calibration:
    """The GPU's own calibration: from ``text`` (a calibration file's contents, compared with
    ``hardware``'s spec figures) if given, else its measured file, else the default.
    ``ParamError`` naming ``calibration`` for a file that cannot be read."""
    if text:
        try:
            rows = read_rows(text)
            figures = measured_figures(rows)
        except CalibrationError as error:
            raise ParamError("calibration", f"calibration cannot be read: {error}") from None
        if not figures:
            raise ParamError(
                "calibration",
                "calibration has no bandwidth, gemm or knee rows (tools/measure_gpu.py writes them)",
            )
        return from_measurements(rows, hardware, "your calibration file")
    measured = measured_calibrations().get(hardware.name)
    if measured is not None:
        return measured
    if hardware.name in FITTED_KERNEL_SCALE:
        default, scale = default_calibration(), FITTED_KERNEL_SCALE[hardware.name]
        return replace(
            default,
            kernel_latency_s=default.kernel_latency_s * scale,
            small_kernel_latency_s=default.small_kernel_s * scale,
            source=f"kernels' fixed costs {scale:g} × the CUDA figures, fitted on {SERVING_FIT_ON}; "
            f"the rest {default.source}",
        )
    if hardware.name in FITTED_MEMORY_EFFICIENCY:
        default = default_calibration()
        return replace(
            default,
            memory_efficiency=FITTED_MEMORY_EFFICIENCY[hardware.name],
            source=f"memory efficiency fitted on {FITTED_ON}; the rest {default.source}",
        )
    return default_calibration()


def engine_calibration(hardware: Hardware, text: str | None = None) -> Calibration:
    """The GPU's calibration with vLLM's own cost a step added: a serving engine's step."""
    gpu = gpu_calibration(hardware, text)
    return replace(
        gpu,
        step_overhead_s=gpu.step_overhead_s + VLLM_STEP_OVERHEAD_S,
        source=f"{gpu.source}; vLLM's own {VLLM_STEP_OVERHEAD_S * 1000:g} ms a step, fitted on three runs",
    )


# The typed settings a calibration file's figures replace.
MEASURED_SETTINGS = ("bandwidth_gbs", "peak_tflops", "peak_fp8_tflops")


def with_measured(p: Mapping[str, Any], declared: Sequence[Param] = ()) -> Mapping[str, Any]:
    """A ceiling calculator's settings with a calibration file's measured bandwidth and FLOP/s in
    place of the typed spec figures (decode-ceiling, roofline); unchanged without a file.

    Each measured figure is held to the bounds of the typed field it replaces (``declared``), so
    a file no typed figure could say is refused naming the calibration, not re-run past them."""
    changed = _measured_settings(p)
    for param in declared:
        if param.name in MEASURED_SETTINGS and changed.get(param.name) is not None:
            try:
                param.parse(changed[param.name])
            except ParamError as error:
                raise ParamError(
                    "calibration",
                    f"calibration measures {param.label or param.name} outside its field's range: "
                    f"{error.message}",
                ) from None
    return changed


def _measured_settings(p: Mapping[str, Any]) -> Mapping[str, Any]:
    text = p.get("calibration")
    if not text:
        return p
    try:
        figures = measured_figures(read_rows(str(text)))
    except CalibrationError as error:
        raise ParamError("calibration", f"calibration cannot be read: {error}") from None
    bandwidth = figures.get("read_bandwidth", figures.get("matrix_bandwidth"))
    if bandwidth is None:
        raise ParamError(
            "calibration", "calibration has no bandwidth or knee rows (tools/measure_gpu.py writes them)"
        )
    changed = {**p, "bandwidth_gbs": bandwidth / GB}
    if "bf16_flops" in figures:
        changed["peak_tflops"] = figures["bf16_flops"] / TERA
    if "fp8_flops" in figures and "peak_fp8_tflops" in p:
        changed["peak_fp8_tflops"] = figures["fp8_flops"] / TERA
    return changed

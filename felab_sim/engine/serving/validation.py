"""felab's predictions beside what was measured, in two groups: points a number was fitted on,
and points predicted (nothing fitted on them). bench/bench_validation.py prints it,
docs/benchmarks.md and /sim/engine/ show it.

- LLMServingSim's three named vLLM runs (felab_sim/engine/serving/anchors.py): felab's stored
  run of each (tests/sim/test_anchor_felab.py holds it equal to the engine's), TTFT, TPOT,
  latency and total time. Numbers fitted on them: calibration.FITTED_MEMORY_EFFICIENCY and
  calibration.VLLM_STEP_OVERHEAD_S, so all three are in the fitted group.
- The H200's decode steps and prefills (felab_sim/engine/measured/h200.jsonl): the one step-cost
  function at the H200's calibration, which reads only that file's bandwidth, gemm and knee
  rows (no engine overhead: the steps are CUDA-graph replays of plain PyTorch, no vLLM).

Every simulated figure felab prints carries its expected error (:func:`expected_error`), from
predicted rows only (a row a number was fitted on says how well the fit went, not how far a
prediction may be). Where the published serving runs (serving_validation.py) hold predicted runs
of a kind (mean TTFT, mean TPOT, and throughput for total time) on that kind of model (dense or a
mixture of experts), the band is the 90th percentile of their errors, or with fewer than
``SERVING_ROWS_ENOUGH`` runs their largest, saying how many. A mean latency, which no predicted
row measures, takes the wider of TTFT's and TPOT's. A step (decode or prefill) takes the largest
error of the H200's step rows on its kind of model, or of every step row of its kind where fewer
than two are on that kind of model. A GPU with no row here is calibrated by the
H200's ratios to its spec sheet, and says so (:func:`scaled_from_h200`).

Pure Python: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache

from ..core.numbers import format_with_unit
from ..hardware.calibration import MEASURED_FILES, gpu_calibration, read_rows
from ..hardware.hardware import hardware_preset
from ..hardware.model_cost import Parallelism, model_cost
from ..hardware.step_cost import step_cost
from ..hardware.step_load import decode_load, prefill_load
from ..models.model_presets import preset
from . import serving_validation
from .anchors import anchor_runs

FITTED, PREDICTED = "fitted", "predicted"
# The statistic a band is: the largest error of validation rows, the 90th percentile of the
# predicted serving runs, or their largest where they are too few for a percentile.
LARGEST, P90, FEW_SERVING = "largest", "p90", "largest_serving"
# Published serving runs of one kind enough for their 90th percentile to be the band.
SERVING_ROWS_ENOUGH = 10
# The anchor metrics and their targets (issue 43: TTFT 20%, the rest 10%).
ANCHOR_METRICS = (
    ("ttft_mean_ms", "mean TTFT", "s", 0.001, 0.20),
    ("tpot_mean_ms", "mean TPOT", "ms", 1.0, 0.10),
    ("latency_mean_ms", "mean latency", "s", 0.001, 0.10),
    ("total_s", "total time", "s", 1.0, 0.10),
)
H200_TARGET = 0.10
PLAIN_PYTORCH_SMALL_KERNELS = 10  # a layer's kernels besides its 4 products, unfused (docs/benchmarks.md)
H200_MODEL = "Llama-3.1-8B"  # the measured step's shape (the file's "model" row)
H200_WHAT = "H200, a Llama-3.1-8B-shaped step in plain PyTorch (sequences × context, prompt tokens)"
# The kinds of figure a row measures: an engine run's means (ANCHOR_METRICS' labels) and a step.
DECODE_STEP, PREFILL_STEP = "decode step", "prefill step"
KIND_WORDS = {
    "mean TTFT": "engine runs' mean TTFT",
    "mean TPOT": "engine runs' mean TPOT",
    "mean latency": "engine runs' mean latency",
    "total time": "engine runs' total time",
    DECODE_STEP: "decode steps",
    PREFILL_STEP: "prefill steps",
}
# The published serving runs' figure of each kind they measure (serving_validation.METRICS).
SERVING_KIND_WORDS = {
    "mean TTFT": "published runs' mean TTFT",
    "mean TPOT": "published runs' mean TPOT",
    "total time": "published runs' output tok/s per GPU",
}
# A kind no predicted row measures that is a sum of kinds that are: a mean latency is the TTFT
# and the decode's TPOTs after it, off by no more than its worse part's share.
SUMS_OF_KINDS = {"mean latency": ("mean TTFT", "mean TPOT")}


@dataclass(frozen=True)
class Point:
    group: str  # FITTED or PREDICTED
    what: str
    metric: str
    unit: str
    measured: float
    predicted: float
    target: float  # the largest error the issue allows, as a share
    kind: str = ""  # a KIND_WORDS key: what sort of figure this row measures
    moe: bool = False  # run on a mixture of experts
    hardware: str = ""  # the GPU's preset name

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1

    @property
    def met(self) -> bool:
        return abs(self.error) <= self.target


def anchor_points() -> list[Point]:
    points = []
    for run in anchor_runs():
        felab = run.felab_result()
        assert felab is not None  # the file keeps felab's run of each
        for key, label, unit, scale, target in ANCHOR_METRICS:
            points.append(
                Point(
                    FITTED,
                    f"vLLM on {run.where.split(' on ', 1)[1].split(' (')[0]}, {run.spec.model}",
                    label,
                    unit,
                    run.summary[key] * scale,
                    felab.summary[key] * scale,
                    target,
                    kind=label,
                    moe=preset(run.spec.model).shape.is_moe,
                    hardware=run.spec.hardware,
                )
            )
    return points


def h200_points() -> list[Point]:
    hardware = hardware_preset("h200")
    calibration = gpu_calibration(hardware)
    shape = preset(H200_MODEL).shape
    # The measuring script's step is plain PyTorch: its norms, rotary, residual adds and SiLU are
    # unfused, about 14 operations a layer that launch kernels where vLLM's fused layer has 10:
    # the same 4 products, 10 small kernels in place of 6.
    cost = replace(
        model_cost(shape, 2.0, 2.0, Parallelism()), small_kernels=PLAIN_PYTORCH_SMALL_KERNELS * shape.layers
    )
    rows = read_rows(MEASURED_FILES["h200"].read_text())
    points = []
    for row in rows:
        if row.get("repeat") or "s" not in row:
            continue
        if row["kind"] == "decode":
            load = decode_load(int(row["B"]), int(row["T"]) + 1)
            metric, kind = f"decode, {row['B']} × {row['T']:,}", DECODE_STEP
        elif row["kind"] == "prefill":
            load = prefill_load(int(row["P"]))
            metric, kind = f"prefill, {row['P']:,}", PREFILL_STEP
        else:
            continue
        step = step_cost(cost, hardware, calibration, load)
        points.append(
            Point(
                PREDICTED,
                H200_WHAT,
                metric,
                "ms",
                row["s"] * 1000,
                step.seconds * 1000,
                H200_TARGET,
                kind=kind,
                moe=shape.is_moe,
                hardware="h200",
            )
        )
    return points


@cache
def validation_points() -> tuple[Point, ...]:
    return tuple(anchor_points() + h200_points())


@dataclass(frozen=True)
class ExpectedError:
    """How far a figure of one kind may be off: the largest error of the validation rows behind it."""

    share: float  # the largest |felab ÷ measured − 1| of the rows (or their 90th percentile)
    rows: int
    kind: str  # a KIND_WORDS key
    models: str  # which models' rows: "dense models", "mixtures of experts", "all models"
    statistic: str = LARGEST  # LARGEST, or P90 (FEW_SERVING) of published serving runs felab predicted
    part_of: str = ""  # the kind this band stands in for, as the wider of its parts' bands
    reciprocal: bool = False  # the figure is a constant ÷ the validated one (1 ÷ TPOT, a price ÷ throughput)

    @property
    def low_share(self) -> float:
        """How far below the measured value felab's figure may be, as a share of it (the error's
        negative end)."""
        return self.share / (1 + self.share) if self.reciprocal else min(1.0, self.share)

    @property
    def high_share(self) -> float | None:
        """How far above it felab's figure may be (None: no bound, the validated figure may be off
        by 100% or more)."""
        if not self.reciprocal:
            return self.share
        return self.share / (1 - self.share) if self.share < 1 else None

    @property
    def text(self) -> str:
        """ "±18.6%", or for a reciprocal "−15.6% / +22.8%"."""
        if not self.reciprocal:
            return "±" + format_with_unit(round(100 * self.share, 1), "%")
        high = self.high_share
        above = "no upper bound" if high is None else "+" + format_with_unit(round(100 * high, 1), "%")
        return f"−{format_with_unit(round(100 * self.low_share, 1), '%')} / {above}"

    @property
    def why(self) -> str:
        """ "the largest error of 2 validation rows (engine runs' mean TTFT, dense models)"."""
        if self.reciprocal:
            return f"its reciprocal's {replace(self, reciprocal=False).text}, {replace(self, reciprocal=False).why}"
        if self.part_of:
            return f"for {self.part_of}, {self.wider_of}: {replace(self, part_of='').why}"
        return f"{self.rows_phrase} ({self.kind_words}, {self.models})"

    @property
    def wider_of(self) -> str:
        """For a band that stands for a sum: "the wider of mean TTFT's and mean TPOT's"."""
        return "the wider of " + " and ".join(f"{part}'s" for part in SUMS_OF_KINDS[self.part_of])

    @property
    def rows_phrase(self) -> str:
        """Which rows' error the band is: "the 90th percentile error of 36 published serving runs
        felab predicted"."""
        if self.statistic == P90:
            return f"the 90th percentile error of {self.rows} published serving runs felab predicted"
        if self.statistic == FEW_SERVING:
            return (
                f"the largest error of the {self.rows} published serving runs felab predicted, too few "
                "for a 90th percentile"
            )
        return f"the largest error of {self.rows} validation row{'s' if self.rows != 1 else ''}"

    @property
    def source(self) -> str:
        """The rows behind the band, without the kind they measure: "the 90th percentile error
        of 36 published serving runs felab predicted (dense models)"."""
        return f"{self.rows_phrase} ({self.models})"

    @property
    def kind_words(self) -> str:
        """What the rows measured: "published runs' mean TTFT"."""
        return (SERVING_KIND_WORDS if self.statistic in (P90, FEW_SERVING) else KIND_WORDS)[self.kind]

    def band(self, value: float) -> tuple[float, float]:
        """Where the measured value may lie when felab's figure is ``value``: felab ÷ measured − 1
        from −low_share to +high_share puts it between value ÷ (1 + high_share) and
        value ÷ (1 − low_share). A figure off by ±s is measured within value ÷ (1 ± s); its
        reciprocal, within value × (1 ± s)."""
        high = self.high_share
        below = 0.0 if high is None else value / (1 + high)
        above = math.inf if self.low_share >= 1 else value / (1 - self.low_share)
        return below, above

    def as_json(self) -> dict[str, object]:
        return {
            "share": self.share,
            "rows": self.rows,
            "kind": self.kind,
            "models": self.models,
            "statistic": self.statistic,
            "part_of": self.part_of or None,
            "reciprocal": self.reciprocal,
            "low_share": self.low_share,
            "high_share": self.high_share,
        }


def serving_expected_error(kind: str, moe: bool) -> ExpectedError | None:
    """The 90th percentile error of the predicted serving runs of ``kind`` on that kind of model
    (with fewer than SERVING_ROWS_ENOUGH runs, their largest error, and the band says how many),
    or None where no predicted run measures it."""
    errors = [
        abs(point.error)
        for point in serving_validation.serving_points()
        if point.kind == kind and point.moe == moe and point.group == serving_validation.PREDICT
    ]
    if not errors:
        return None
    models = "mixtures of experts" if moe else "dense models"
    if len(errors) < SERVING_ROWS_ENOUGH:
        return ExpectedError(max(errors), len(errors), kind, models, FEW_SERVING)
    return ExpectedError(serving_validation.nearest_rank(errors, 90), len(errors), kind, models, P90)


def expected_error(kind: str, moe: bool) -> ExpectedError:
    """The expected error of a figure of ``kind`` on a dense model or a mixture of experts, from
    predicted rows only: a row a number was fitted on says how well the fit went, not how far a
    prediction may be."""
    serving = serving_expected_error(kind, moe)
    if serving is not None:
        return serving
    if kind in SUMS_OF_KINDS:
        return replace(widest(*(expected_error(part, moe) for part in SUMS_OF_KINDS[kind])), part_of=kind)
    of_kind = [p for p in validation_points() if p.kind == kind and p.group == PREDICTED]
    if not of_kind:
        raise KeyError(kind)
    same = [p for p in of_kind if p.moe == moe]
    if len(same) >= 2:
        chosen, models = same, "mixtures of experts" if moe else "dense models"
    elif same:
        chosen, models = of_kind, "all models: one row of this kind of model is too few to narrow it"
    else:
        chosen, models = of_kind, "dense models only: no mixture of experts was measured"
    return ExpectedError(max(abs(p.error) for p in chosen), len(chosen), kind, models)


def band_legend(
    errors: Mapping[str, ExpectedError], reciprocal_names: Mapping[str, str] | None = None
) -> list[str]:
    """What a page's bands are, each source of rows named once: "the 90th percentile error of 36
    published serving runs felab predicted (dense models): ±293.5% on published runs' mean TTFT
    (also mean latency's: the wider of mean TTFT's and mean TPOT's); ±36.2% on …". ``errors`` is
    keyed by figure; a band that stands for a sum, or for a figure that is a number ÷ the validated
    one (named by ``reciprocal_names``), is given beside the band it comes from."""
    sources: dict[str, dict[tuple[int, str], set[str]]] = {}
    for key, error in errors.items():
        plain = replace(error, part_of="", reciprocal=False)
        band = (list(KIND_WORDS).index(plain.kind), f"{plain.text} on {plain.kind_words}")
        uses = sources.setdefault(plain.source, {}).setdefault(band, set())
        if error.part_of:
            uses.add(f"also {error.part_of}'s: {error.wider_of}")
        if error.reciprocal:
            uses.add(f"{error.text} on {(reciprocal_names or {}).get(key, 'a number ÷ it')}")
    return [
        f"{source}: "
        + "; ".join(
            text + (f" ({'; '.join(sorted(uses[(order, text)]))})" if uses[(order, text)] else "")
            for order, text in sorted(uses)
        )
        for source, uses in sorted(sources.items())
    ]


def widest(*errors: ExpectedError) -> ExpectedError:
    """A figure that is the sum of parts: it is off by no more than its worst part's share."""
    return max(errors, key=lambda error: error.share)


@cache
def measured_hardware() -> frozenset[str]:
    """The GPUs a run or step was measured on (preset names): the validation table's rows and the
    published serving runs'."""
    serving = {serving_validation.setup(run).hardware.name for run in serving_validation.validated_runs()}
    return frozenset({p.hardware for p in validation_points()} | serving)


def scaled_from_h200(hardware_name: str) -> bool:
    """Whether no run or step was measured on a GPU: its figures are the H200's ratios to its spec
    sheet, with no measurement on it to say how far they may be."""
    return hardware_name not in measured_hardware()


# An engine run's figures and the kind of row each is validated by: a percentile by its mean's rows
# (the measured runs give means only), throughput by total time's (the tokens ÷ the run's time).
ENGINE_FIGURE_KINDS = {
    "ttft_mean_ms": "mean TTFT",
    "tpot_mean_ms": "mean TPOT",
    "latency_mean_ms": "mean latency",
    "total_s": "total time",
    "output_tok_s": "total time",
    **{f"ttft_p{percent}_ms": "mean TTFT" for percent in (50, 90, 99)},
    **{f"tpot_p{percent}_ms": "mean TPOT" for percent in (50, 90, 99)},
}


# An engine run's total time and its output throughput are its tokens ÷ each other: the one the
# rows behind their band did not measure takes the band through the division.
ENGINE_RECIPROCAL_NAMES = {
    "total_s": "total time, the run's tokens ÷ it",
    "output_tok_s": "output throughput, the run's tokens ÷ it",
}


def engine_expected_errors(moe: bool) -> dict[str, ExpectedError]:
    """Each engine figure's expected error, on a dense model or a mixture of experts. The published
    serving runs measure throughput, the anchor runs total time: whichever the band came from,
    the other figure is its reciprocal."""
    errors = {key: expected_error(kind, moe) for key, kind in ENGINE_FIGURE_KINDS.items()}
    from_throughput = errors["total_s"].statistic in (P90, FEW_SERVING)
    derived = "total_s" if from_throughput else "output_tok_s"
    errors[derived] = replace(errors[derived], reciprocal=True)
    return errors


SCALED_NOTE = "scaled from the H200: no run or step was measured on this GPU"


def _shown(value: float, unit: str) -> str:
    return f"{value:,.3g} {unit}" if value < 100 else f"{value:,.1f} {unit}"


def markdown_row(point: Point) -> str:
    """One point as docs/benchmarks.md's table has it (a test holds the two the same)."""
    cells = (
        point.what,
        point.metric,
        _shown(point.measured, point.unit),
        _shown(point.predicted, point.unit),
        f"{100 * point.error:+.1f}%" + ("" if point.met else " (missed)"),
        f"{100 * point.target:.0f}%",
    )
    return "| " + " | ".join(cells) + " |"

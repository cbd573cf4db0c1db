"""The planner's curve: throughput per GPU against tokens per second per user, over concurrency.

For one model, GPU, precision and parallelism (the engine's settings), the engine runs a closed
loop at each concurrency C = 1, 2, 4, … up to ``curve_max_concurrency``, the way InferenceX runs
its published sweeps: C requests in flight from the start, each finished one replaced at once,
each request's prompt and output drawn uniformly from 80–100% of the workload's lengths (its
``--random-range-ratio 0.8``), the same seed every time. ``requests_at(C)`` requests a level.

Each level gives what a serving engineer reads off InferenceX's chart: output tokens per second
per GPU (every output token ÷ the level's time ÷ the GPUs) against tokens per second per user
(1 ÷ the mean TPOT), the mean TTFT and TPOT, goodput at the user's TTFT and TPOT targets (the
share of requests meeting both, and the output tokens per second per GPU of those requests), and
dollars per million output tokens at prices.py's GPU-hour price. Each figure carries its expected
error from the validation table (validation.engine_expected_errors). Measured runs at the same
settings (serving_runs.py) are put beside the curve, each with its group (fitted on or predicted).

The whole curve shares one budget of simulation work (simulate's work units, about one request
in one engine step): a level that would pass it stops the curve there, keeping the levels done,
and the curve says what to change. Pure Python: no Django.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..core.numbers import format_with_unit
from ..core.params import Param, ParamError, ParamValue, parse_all
from ..hardware.prices import Price, price
from .engine_params import ENGINE_PARAMS, PASTED, EngineInputs
from .run_results import RequestResult
from .servers import REQUEST_FIXED_S, REQUEST_SERIAL_S, VLLM, Server, vllm_server
from .serving_runs import FIT, ServingRun, runs, split
from .serving_validation import REQUESTS_PER_CONCURRENCY
from .simulate import ClosedLoop, TraceRequest, WorkBudgetExceeded, simulate
from .validation import ExpectedError, band_legend, engine_expected_errors, scaled_from_h200

# Rounds of C requests a level (requests_at).
ROUNDS = REQUESTS_PER_CONCURRENCY
# The web's budget for the whole curve: the default settings' curve (Llama-3.1-70B, FP8, one
# H100, 300/50 tokens, C = 1…256) costs about 412,000 units, 0.7 s of CPU here; a curve of long
# replies stops early and says so.
WEB_CURVE_WORK = 500_000.0
# The command line's: every curve stops, whatever its settings (a minute or so of CPU at most).
COMMAND_CURVE_WORK = 40_000_000.0
# InferenceX's benchmark draws each length from [0.8 × length, length].
RANGE_RATIO = 0.8
LENGTH_SEED = 0
# The GPU-hour price the dollars are at (prices.py).
GPU_HOUR_PRICE = "dedicated-gpu-hour"
# The course has one GPU-hour price, a Fireworks deployment's on a GPU it does not name: the
# dollars apply it to whichever GPU is chosen, and say so.
PRICE_NOTE = (
    "one price for every GPU: the course's Fireworks deployment (lessons 10 and 15, its GPU not named), "
    "not a price for this GPU, so the dollars compare settings on one GPU, not GPUs"
)
# felab's precision names and how serving_runs.csv spells the weights' precision.
PRECISION_PREFIXES = {"bf16": ("bf16",), "fp8": ("fp8",)}

PLANNER_PARAMS = (
    Param(
        "curve_max_concurrency",
        "int",
        256,
        "The curve runs C = 1, 2, 4, … up to this many requests in flight",
        unit="requests",
        label="curve up to concurrency",
        low=1,
        high=1024,
    ),
    Param(
        "ttft_target_ms",
        "float",
        500.0,
        "A request meets the targets when its time to first token is within this…",
        unit="ms",
        label="TTFT target",
        low=0,
        low_open=True,
        high=3_600_000,
    ),
    Param(
        "tpot_target_ms",
        "float",
        50.0,
        "…and its time per output token within this (50 ms is 20 tokens a second)",
        unit="ms",
        label="TPOT target",
        low=0,
        low_open=True,
        high=60_000,
    ),
    Param(
        "slo_attainment_pct",
        "float",
        90.0,
        "A concurrency meets the targets when at least this share of its requests meets both",
        unit="%",
        label="requests that must meet them",
        low=0,
        low_open=True,
        high=100,
    ),
)
PLANNER_PARAM_NAMES = tuple(param.name for param in PLANNER_PARAMS)


def parse_planner_values(raw: Mapping[str, object]) -> dict[str, ParamValue]:
    """The planner's settings, checked, defaults filled; unknown names refused."""
    return parse_all(PLANNER_PARAMS, raw, owner="the planner")


# The engine's settings the curve does not read: it makes its own closed loops.
CURVE_IGNORES = ("workload", "requests", "rate", "concurrency")


def curve_command(values: Mapping[str, ParamValue], planner: Mapping[str, ParamValue] | None = None) -> str:
    """The command that runs this curve with the command line's budget: the model and GPU, and
    every other setting the curve reads that differs from its default."""
    words = ["manage.py engine --curve"]
    words.append("--model-config FILE.json" if values["model"] == PASTED else f"--model {values['model']}")
    for param in ENGINE_PARAMS:
        value = values[param.name]
        if param.name in ("model", *CURVE_IGNORES) or (value == param.default and param.name != "hardware"):
            continue
        if param.kind == "bool":
            words.append(param.flag if value else f"--no-{param.flag[2:]}")
        else:
            words.append(f"{param.flag} {value:g}" if isinstance(value, float) else f"{param.flag} {value}")
    for param in PLANNER_PARAMS:
        value = (planner or {}).get(param.name, param.default)
        if value != param.default:
            words.append(f"{param.flag} {value:g}" if isinstance(value, float) else f"{param.flag} {value}")
    return " ".join(words)


def levels_up_to(top: int) -> tuple[int, ...]:
    """1, 2, 4, … up to ``top``, and ``top`` itself when it is no power of two."""
    found = [1 << n for n in range(top.bit_length()) if 1 << n <= top]
    return tuple(found if found[-1] == top else [*found, top])


def requests_at(level: int) -> int:
    """Requests a level: ten rounds of C, at least 4, as InferenceX's scripts send (10 × C) and
    serving_validation runs the published runs. The first round arrives as one burst that queues
    for its prefills; with fewer rounds that burst weighs more in every mean (at two rounds half
    the requests, and the default curve's mean TTFT at C = 64 comes out half as long again)."""
    return max(4, ROUNDS * level)


def request_sizes(input_tokens: int, output_tokens: int, count: int) -> list[TraceRequest]:
    """``count`` request sizes, each length uniform in [0.8 × length, length], the same every time."""
    rng = random.Random(LENGTH_SEED)

    def drawn(length: int) -> int:
        return rng.randint(max(1, math.floor(RANGE_RATIO * length)), length)

    return [TraceRequest(0.0, drawn(input_tokens), drawn(output_tokens)) for _ in range(count)]


@dataclass(frozen=True)
class Level:
    """One concurrency's closed loop, simulated."""

    concurrency: int
    requests: tuple[RequestResult, ...]
    gpus: int
    work: float

    @property
    def seconds(self) -> float:
        return max(r.last_token_ts for r in self.requests)

    def _per_gpu(self, chosen: Sequence[RequestResult]) -> float:
        return sum(r.output_toks for r in chosen) / self.seconds / self.gpus

    @property
    def output_tok_s_per_gpu(self) -> float:
        return self._per_gpu(self.requests)

    @property
    def ttft_mean_ms(self) -> float:
        return 1000 * sum(r.ttft for r in self.requests) / len(self.requests)

    @property
    def tpot_mean_ms(self) -> float | None:
        tpots = [t for t in (r.tpot for r in self.requests) if t is not None]
        return 1000 * sum(tpots) / len(tpots) if tpots else None

    @property
    def tok_s_per_user(self) -> float | None:
        tpot = self.tpot_mean_ms
        return 1000 / tpot if tpot else None

    def meeting(self, ttft_ms: float, tpot_ms: float, scale_ttft: float = 1.0, scale_tpot: float = 1.0):
        """The requests whose TTFT and TPOT (each times its scale) are within the targets; a request
        of one output token has no TPOT and is held to its TTFT alone."""
        return [
            r
            for r in self.requests
            if 1000 * r.ttft * scale_ttft <= ttft_ms
            and (r.tpot is None or 1000 * r.tpot * scale_tpot <= tpot_ms)
        ]


@dataclass(frozen=True)
class Curve:
    """The levels simulated, in order, and where and why the budget stopped the curve (None: it
    ran every level asked for)."""

    levels: tuple[Level, ...]
    asked: tuple[int, ...]
    budget: float
    stopped_at: int | None = None
    stopped_because: str = ""
    lengths: tuple[int, int] = (0, 0)
    server: str = VLLM  # the serving engine its runs model (servers.py)

    @property
    def work(self) -> float:
        return sum(level.work for level in self.levels)


def curve_server(inputs: EngineInputs) -> Server:
    """The serving engine the curve's runs model: vLLM at these settings' ``max_num_seqs``, its
    CUDA graphs and its fitted cost a request, the server felab simulated the published vLLM and
    NIM runs behind the expected errors with (serving_validation.py), so the figures and their
    bands come from one model. The engine's settings offer no other engine."""
    return vllm_server(inputs.settings.max_num_seqs)


def server_sentence(curve: Curve) -> str:
    """What serves the curve's runs, in words, and how the engine's single run differs."""
    name = "vLLM V1" if curve.server == VLLM else curve.server
    return (
        f"Every level is served as {name} serves: its CUDA graphs, and a request's cost outside the "
        f"steps ({format_with_unit(1000 * REQUEST_SERIAL_S[VLLM], 'ms')} one request at a time, then "
        f"{format_with_unit(1000 * REQUEST_FIXED_S[VLLM], 'ms')}, fitted on published vLLM runs), as felab "
        "simulated the published runs behind the ± bands (vLLM's and NIM's as vLLM, SGLang's as SGLang); the "
        "settings offer no other engine. The page's single run "
        "and the sweep model the steps alone, without that server (as LLMServingSim's runs were fitted), "
        "so their TTFTs hold no such cost"
    )


def simulate_curve(
    inputs: EngineInputs,
    top: int,
    input_tokens: int,
    output_tokens: int,
    budget: float,
    advice: str = "shorten the output tokens, or run `manage.py engine --curve` for the whole curve",
    server: Server | None = None,
) -> Curve:
    """The engine at every level up to ``top``, within ``budget`` work units for all of them,
    each run served by ``server`` (by default :func:`curve_server`'s vLLM). A level that would
    pass the budget is stopped inside its run (simulate's own count) and ends the curve: the
    curve keeps the levels done and says what to change."""
    server = server if server is not None else curve_server(inputs)
    asked = levels_up_to(top)
    gpus = inputs.settings.tensor_parallel * inputs.settings.data_parallel
    sizes = request_sizes(input_tokens, output_tokens, requests_at(asked[-1]))
    done: list[Level] = []
    left = budget
    for level in asked:
        try:
            result = simulate(
                sizes,
                inputs.shape,
                inputs.hardware,
                inputs.settings,
                calibration=inputs.calibration,
                closed_loop=ClosedLoop(level, requests_at(level)),
                sample_interval=None,
                work_budget=left,
                server=server,
            )
        except WorkBudgetExceeded:
            spent = budget - left
            reached = f"up to C = {done[-1].concurrency}" if done else "none"
            because = (
                f"The curve stopped at C = {level}: its budget is {budget:,.0f} units of simulation work "
                f"(a unit is about one request in one engine step) and the levels before it ({reached}) "
                f"spent {spent:,.0f}. To go further, {advice}"
            )
            return Curve(
                tuple(done), asked, budget, level, because, (input_tokens, output_tokens), server.name
            )
        except ParamError as error:  # a request these settings cannot hold
            because = f"The curve could not run at C = {level}: {error.message}"
            return Curve(
                tuple(done), asked, budget, level, because, (input_tokens, output_tokens), server.name
            )
        left -= result.work
        done.append(Level(level, tuple(result.requests), gpus, result.work))
    return Curve(tuple(done), asked, budget, lengths=(input_tokens, output_tokens), server=server.name)


# ----------------------------------------------------------------------------- what is read off it


@dataclass(frozen=True)
class Targets:
    ttft_ms: float
    tpot_ms: float
    attainment: float  # a share, 0 to 1

    @classmethod
    def from_values(cls, values: Mapping[str, ParamValue]) -> Targets:
        return cls(
            float(values["ttft_target_ms"]),  # type: ignore[arg-type]
            float(values["tpot_target_ms"]),  # type: ignore[arg-type]
            float(values["slo_attainment_pct"]) / 100,  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class PlannedLevel:
    """A level as the planner reports it: every figure, and the range the expected errors give."""

    concurrency: int
    requests: int
    output_tok_s_per_gpu: float
    tok_s_per_user: float | None
    ttft_mean_ms: float
    tpot_mean_ms: float | None
    meeting_share: float
    meeting_share_low: float  # every request's times at the top of their bands
    meeting_share_high: float  # and at the bottom
    goodput_tok_s_per_gpu: float
    usd_per_m_tokens: float
    meets: bool

    def as_json(self) -> dict[str, object]:
        return {
            "concurrency": self.concurrency,
            "requests": self.requests,
            "output_tok_s_per_gpu": self.output_tok_s_per_gpu,
            "tok_s_per_user": self.tok_s_per_user,
            "ttft_mean_ms": self.ttft_mean_ms,
            "tpot_mean_ms": self.tpot_mean_ms,
            "goodput": {
                "share": self.meeting_share,
                "share_within_expected_error": [self.meeting_share_low, self.meeting_share_high],
                "tok_s_per_gpu": self.goodput_tok_s_per_gpu,
                "meets_targets": self.meets,
            },
            "usd_per_m_output_tokens": self.usd_per_m_tokens,
        }


# Each planner figure and the engine figure whose validation rows give its expected error:
# tokens a second a user is 1 ÷ TPOT, dollars a token the price ÷ the throughput.
FIGURE_ERRORS = {
    "output_tok_s_per_gpu": "output_tok_s",
    "goodput_tok_s_per_gpu": "output_tok_s",
    "usd_per_m_output_tokens": "output_tok_s",
    "tok_s_per_user": "tpot_mean_ms",
    "tpot_mean_ms": "tpot_mean_ms",
    "ttft_mean_ms": "ttft_mean_ms",
}


# Figures that are a constant ÷ their source: an error of ±s on the source is −s ÷ (1 + s) to
# +s ÷ (1 − s) on them.
RECIPROCAL_FIGURES = {
    "tok_s_per_user": "tok/s a user, 1 ÷ it",
    "usd_per_m_output_tokens": "$ per million output tokens, a price ÷ it",
}


def figure_errors(moe: bool) -> dict[str, ExpectedError]:
    engine = engine_expected_errors(moe)
    return {
        key: replace(engine[source], reciprocal=key in RECIPROCAL_FIGURES)
        for key, source in FIGURE_ERRORS.items()
    }


def planned(
    level: Level, targets: Targets, errors: Mapping[str, ExpectedError], gpu_hour: Price
) -> PlannedLevel:
    n = len(level.requests)
    # Each request's times scaled to where the measured ones may lie: the band of a figure of 1.
    ttft_bottom, ttft_top = errors["ttft_mean_ms"].band(1.0)
    tpot_bottom, tpot_top = errors["tpot_mean_ms"].band(1.0)
    meeting = level.meeting(targets.ttft_ms, targets.tpot_ms)
    low = level.meeting(targets.ttft_ms, targets.tpot_ms, ttft_top, tpot_top)
    high = level.meeting(targets.ttft_ms, targets.tpot_ms, ttft_bottom, tpot_bottom)
    per_gpu = level.output_tok_s_per_gpu
    return PlannedLevel(
        concurrency=level.concurrency,
        requests=n,
        output_tok_s_per_gpu=per_gpu,
        tok_s_per_user=level.tok_s_per_user,
        ttft_mean_ms=level.ttft_mean_ms,
        tpot_mean_ms=level.tpot_mean_ms,
        meeting_share=len(meeting) / n,
        meeting_share_low=len(low) / n,
        meeting_share_high=len(high) / n,
        goodput_tok_s_per_gpu=level._per_gpu(meeting),
        usd_per_m_tokens=gpu_hour.usd / (per_gpu * 3600) * 1e6,
        meets=len(meeting) / n >= targets.attainment,
    )


@dataclass(frozen=True)
class MeasuredPoint:
    """A published run at the curve's settings, and felab's level at its concurrency if the curve has one."""

    run: ServingRun
    group: str  # serving_runs' FIT or PREDICT
    felab: PlannedLevel | None

    @property
    def tok_s_per_user(self) -> float:
        return 1000 / self.run.tpot_mean_ms

    def errors(self) -> dict[str, float]:
        """felab ÷ measured − 1 for throughput per GPU, TTFT and TPOT."""
        if self.felab is None:
            return {}
        found = {
            "output_tok_s_per_gpu": self.felab.output_tok_s_per_gpu / self.run.output_tok_s_per_gpu - 1,
            "ttft_mean_ms": self.felab.ttft_mean_ms / self.run.ttft_mean_ms - 1,
        }
        if self.felab.tpot_mean_ms is not None:
            found["tpot_mean_ms"] = self.felab.tpot_mean_ms / self.run.tpot_mean_ms - 1
        return found

    def as_json(self) -> dict[str, object]:
        run = self.run
        return {
            "run_id": run.run_id,
            "group": "fitted" if self.group == FIT else "predicted",
            "engine": f"{run.engine} {run.engine_version}",
            "concurrency": run.concurrency,
            "request_count": run.request_count,
            "output_tok_s_per_gpu": run.output_tok_s_per_gpu,
            "tok_s_per_user": self.tok_s_per_user,
            "ttft_mean_ms": run.ttft_mean_ms,
            "tpot_mean_ms": run.tpot_mean_ms,
            "source_group": run.source_group,
            "source": run.source,
            "felab_error": self.errors(),
        }


def _same_precision(run: ServingRun, precision: str) -> bool:
    return run.precision.startswith(PRECISION_PREFIXES.get(precision, (precision,)))


def runs_at(values: Mapping[str, ParamValue]) -> list[ServingRun]:
    """Published runs of this model on this GPU at this precision and parallelism, any lengths."""
    return [
        run
        for run in runs()
        if run.felab_model == values["model"]
        and run.felab_gpu == values["hardware"]
        and _same_precision(run, str(values["precision"]))
        and run.tp == values["tensor_parallel"]
        and run.dp == values["data_parallel"]
        and (run.ep > 1) == bool(values["expert_parallel"])
    ]


@dataclass(frozen=True)
class Plan:
    curve: Curve
    targets: Targets
    levels: tuple[PlannedLevel, ...]
    best: PlannedLevel | None
    errors: Mapping[str, ExpectedError]
    gpu_hour: Price
    measured: tuple[MeasuredPoint, ...]
    other_lengths: tuple[tuple[int, int, int], ...]  # (input, output, runs) measured at other lengths
    scaled_from_h200: bool
    gpus: int
    moe: bool = False

    @property
    def error_legend(self) -> list[str]:
        return band_legend(self.errors, RECIPROCAL_FIGURES)

    def as_json(self) -> dict[str, object]:
        return {
            "levels_asked": list(self.curve.asked),
            "lengths": {
                "input_tokens": self.curve.lengths[0],
                "output_tokens": self.curve.lengths[1],
                "range_ratio": RANGE_RATIO,
            },
            "gpus": self.gpus,
            "server": {"engine": self.curve.server, "sentence": server_sentence(self.curve)},
            "work": {"budget": self.curve.budget, "spent": self.curve.work},
            "stopped_at": self.curve.stopped_at,
            "stopped_because": self.curve.stopped_because or None,
            "targets": {
                "ttft_ms": self.targets.ttft_ms,
                "tpot_ms": self.targets.tpot_ms,
                "attainment": self.targets.attainment,
            },
            "points": [level.as_json() for level in self.levels],
            "best_concurrency": self.best.concurrency if self.best else None,
            "price": {
                "name": self.gpu_hour.name,
                "usd": self.gpu_hour.usd,
                "unit": self.gpu_hour.unit,
                "source": self.gpu_hour.source,
                "note": PRICE_NOTE,
            },
            "expected_error": {
                "figures": {key: error.as_json() for key, error in self.errors.items()},
                "scaled_from_h200": self.scaled_from_h200,
            },
            "measured": [point.as_json() for point in self.measured],
            "measured_at_other_lengths": [
                {"input_tokens": i, "output_tokens": o, "runs": n} for i, o, n in self.other_lengths
            ],
        }


def plan(
    curve: Curve,
    values: Mapping[str, ParamValue],
    planner_values: Mapping[str, ParamValue],
    inputs: EngineInputs,
    hardware_typed_in: bool = False,
) -> Plan:
    """What the curve says at the user's targets, with its expected errors and the measured runs
    at these settings (none for a typed-in GPU or a pasted config.json)."""
    targets = Targets.from_values(planner_values)
    moe = inputs.shape.is_moe
    errors = figure_errors(moe)
    gpu_hour = price(GPU_HOUR_PRICE)
    levels = tuple(planned(level, targets, errors, gpu_hour) for level in curve.levels)
    meeting = [level for level in levels if level.meets]
    best = max(meeting, key=lambda level: level.output_tok_s_per_gpu) if meeting else None
    found = [] if hardware_typed_in or inputs.calibration is not None else runs_at(values)
    by_level = {level.concurrency: level for level in levels}
    groups = split()
    lengths = curve.lengths
    measured = tuple(
        MeasuredPoint(run, groups[run.run_id], by_level.get(run.concurrency))
        for run in sorted(found, key=lambda r: r.concurrency)
        if (run.input_len, run.output_len) == lengths
    )
    other: dict[tuple[int, int], int] = {}
    for run in found:
        if (run.input_len, run.output_len) != lengths:
            other[(run.input_len, run.output_len)] = other.get((run.input_len, run.output_len), 0) + 1
    return Plan(
        curve,
        targets,
        levels,
        best,
        errors,
        gpu_hour,
        measured,
        tuple((i, o, n) for (i, o), n in sorted(other.items())),
        inputs.calibration is None and scaled_from_h200(inputs.hardware.name),
        inputs.settings.tensor_parallel * inputs.settings.data_parallel,
        moe,
    )


def share_text(share: float) -> str:
    """A share of requests as a percentage, rounded down to a tenth: a share under a target never
    reads as the target (115 of 128 is 89.8%, not 90%)."""
    tenths = math.floor(1000 * share + 1e-9)
    return f"{tenths // 10}%" if tenths % 10 == 0 else f"{tenths / 10:.1f}%"


def best_sentence(result: Plan) -> str:
    """The planner's answer in words."""
    targets = result.targets
    wanted = (
        f"TTFT within {format_with_unit(targets.ttft_ms, 'ms')} and TPOT within "
        f"{format_with_unit(targets.tpot_ms, 'ms')} for at least {format_with_unit(100 * targets.attainment, '%')} "
        "of requests"
    )
    best = result.best
    if best is None:
        if not result.levels:
            return f"No concurrency was simulated, so none is known to meet {wanted}."
        return (
            f"No concurrency simulated meets {wanted}: loosen the targets, or try more GPUs, a faster "
            "GPU or a lower precision."
        )
    errors = result.errors
    return (
        f"The best concurrency that meets {wanted} is {best.concurrency}: "
        f"{format_with_unit(best.output_tok_s_per_gpu, 'tok/s')} a GPU "
        f"({errors['output_tok_s_per_gpu'].text}), "
        f"{format_with_unit(best.tok_s_per_user or 0, 'tok/s')} a user ({errors['tok_s_per_user'].text}), "
        f"${best.usd_per_m_tokens:,.2f} per million output tokens ({errors['usd_per_m_output_tokens'].text})."
    )

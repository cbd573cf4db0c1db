"""Simulated sweeps, cached by their parameters.

A sweep is a pure function of its frozen parameters, so one per process is enough:
the card pages and /sim/ ask for the same few scenarios again and again.
"""

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlencode

from .engine.calculators import get as get_calculator
from .engine.core.calculator import Result
from .engine.core.params import ParamError
from .engine.serving.anchors import AnchorRun
from .engine.serving.binding import Binding, binding_limit
from .engine.serving.engine_params import (
    PASTED,
    RATE,
    SWEEP_LEVELS,
    TRACE,
    EngineInputs,
    anchor_for,
    engine_inputs,
    run_engine,
    stored_anchor_run,
    sweep_engine,
)
from .engine.serving.planner import CURVE_IGNORES, WEB_CURVE_WORK, Curve, curve_command, simulate_curve
from .engine.serving.refusals import no_kv_block, over_work_cap
from .engine.serving.run_results import Result as BatchingResult
from .engine.serving.simulate import WorkBudgetExceeded
from .engine.sweep.limits import ENGINE_WEB_LIMITS, WEB_LIMITS
from .engine.sweep.metrics import SweepResult
from .engine.sweep.simulator import run_sweep
from .engine.sweep.sweep_params import SweepParams


@lru_cache(maxsize=512)
def cached_sweep(params: SweepParams) -> SweepResult:
    """The sweep, stopped by SweepTooBig (a ParamError naming ``levels``) past the web's events."""
    return run_sweep(params, WEB_LIMITS.max_events)


@lru_cache(maxsize=256)
def cached_figure(params: SweepParams, *, compact: bool = False) -> str:
    """The model's chart as plotly JSON: building a plotly figure costs far more than the sweep."""
    from .charts.plots import sweep_figure  # plotly is imported only where a chart is drawn

    return sweep_figure(cached_sweep(params), compact=compact)


def flat_text(params: SweepParams) -> dict[str, str]:
    """The flat parameters as a form or a query string writes them: "1,8,16", "18", "0.06"."""
    flat = params.as_flat()
    flat["levels"] = ",".join(str(level) for level in params.levels)
    return {key: value if isinstance(value, str) else f"{value:g}" for key, value in flat.items()}


def sim_query(params: SweepParams) -> str:
    """The /sim/ query string that shows these parameters."""
    return urlencode(flat_text(params))


@lru_cache(maxsize=1024)
def cached_calculation(calculator: str, params: tuple[tuple[str, object], ...]) -> Result:
    """A calculator's result for a parameter set's stored values (a pure function of them)."""
    return get_calculator(calculator).run(dict(params))


@lru_cache(maxsize=1024)
def _cached_chart(name: str, params: tuple[tuple[str, object], ...]) -> str:
    from .charts.calc_charts import chart_json

    return chart_json(name, get_calculator(name).run(dict(params)))


def cached_chart(name: str, result: Result) -> str:
    """A calculator's chart for a result, cached by its parameters like the sweep's."""
    return _cached_chart(name, tuple(result.params.items()))


@dataclass(frozen=True)
class EngineOutcome:
    """A run of the continuous-batching engine as the engine page shows it, with lesson 03's
    sweep on the same engine (None when over its web cap) and the practice server's beside it."""

    inputs: EngineInputs
    result: BatchingResult
    binding: Binding
    sweep: list[dict[str, float]] | None
    practice_sweep: list[dict[str, float]]
    anchor: AnchorRun | None = None  # the measured vLLM run these settings repeat


# Lesson 03's sweep levels, on the practice server as the course runs it.
PRACTICE_SWEEP = SweepParams.from_flat({"levels": ",".join(str(c) for c in SWEEP_LEVELS)})


@lru_cache(maxsize=64)
def engine_outcomes(values: tuple[tuple[str, object], ...], model_config: str) -> EngineOutcome | ParamError:
    """The engine page's run for checked settings, or its refusal: a run over its web cap costs
    as much as the cap before it is refused, so the refusal is kept as well. A measured run's
    settings read felab's stored run of it (anchor_runs.json, checked against the engine by
    tests/sim/test_anchor_felab.py): its 300 requests cost more than a web request's budget."""
    limits = ENGINE_WEB_LIMITS
    checked = dict(values)
    on_trace = checked["workload"] == TRACE
    practice = cached_sweep(PRACTICE_SWEEP).as_dict()["levels"]
    try:
        inputs = engine_inputs(checked, model_config)
    except ParamError as error:
        return error
    try:
        stored = stored_anchor_run(checked, inputs, limits.sample_interval, limits.sweep_work)
        if stored is not None:
            anchor, result, sweep = stored
            binding = binding_limit(result, inputs.settings)
            return EngineOutcome(inputs, result, binding, sweep, practice, anchor)
        result = run_engine(inputs, limits.sample_interval, work_budget=limits.run_work)
    except WorkBudgetExceeded as error:
        if not on_trace:
            if error.cause == "time":
                return over_its_cap(checked, error)
            return over_work_cap(error, inputs, limits.run_work)
        return ParamError(
            "workload",
            f"workload: the trace's 300 requests need more than {limits.run_work:,.0f} units of "
            "simulation work, the web's cap (the three measured runs' own settings are stored and "
            "shown at once); choose requests at a rate, or run `manage.py engine --trace`",
        )
    except ParamError as error:
        if error.param == "gpu_memory_utilization":  # the pool holds no KV block
            model = "the pasted config.json" if checked["model"] == PASTED else str(checked["model"])
            return no_kv_block(error, checked, inputs, model)
        return error
    try:
        sweep = sweep_engine(inputs, work_budget=limits.sweep_work)
    except WorkBudgetExceeded:
        sweep = None
    binding = binding_limit(result, inputs.settings)
    return EngineOutcome(inputs, result, binding, sweep, practice, anchor_for(checked, inputs))


def over_its_cap(values: dict[str, object], error: WorkBudgetExceeded) -> ParamError:
    """The engine's refusal, naming the setting that made the run too long: the arrival rate when
    the engine sat waiting for arrivals most of the simulated time, the typed-in GPU when slow
    steps ran it long, else the requests."""
    if error.cause != "time":
        return error
    text = error.message.removeprefix("requests: ")
    if values["workload"] == RATE and error.idle_s > error.simulated_s / 2:
        return ParamError("rate", f"rate: requests arrive too far apart for a web request: {text}")
    for name in ("bandwidth_gbs", "peak_tflops"):
        if values.get(name) is not None:
            return ParamError(name, f"{name}: steps this slow run too long for a web request: {text}")
    return ParamError("requests", error.message)


def cached_engine(values: tuple[tuple[str, object], ...], model_config: str) -> EngineOutcome:
    """The run (``engine_outcomes``'s), or its ParamError raised: naming ``requests`` when the
    run is over its work cap. A sweep over its own cap is left off (``sweep`` is None)."""
    found = engine_outcomes(values, model_config)
    if isinstance(found, ParamError):
        raise ParamError(found.param, found.message)
    return found


def curve_key(values: dict[str, object]) -> tuple[tuple[str, object], ...]:
    """The engine settings a curve depends on, as ``engine_curve``'s cache key."""
    return tuple((name, value) for name, value in values.items() if name not in CURVE_IGNORES)


def curve_settings(key: tuple[tuple[str, object], ...]) -> dict[str, object]:
    """The engine settings a curve runs at: ``key``'s, the single run's own workload left out."""
    return {**dict(key), "workload": RATE, "requests": 1, "rate": 1.0, "concurrency": 1}


def curve_inputs(key: tuple[tuple[str, object], ...], model_config: str) -> EngineInputs:
    """The model, GPU and settings the curve runs on, without the single run's workload."""
    return engine_inputs(curve_settings(key), model_config)


@lru_cache(maxsize=32)
def engine_curve(key: tuple[tuple[str, object], ...], model_config: str, top: int) -> Curve:
    """The planner's curve (engine/serving/planner.py) for checked engine settings, within the web's
    budget for the whole curve; a curve the budget stops keeps its levels and says why. It has
    its own budget: the single run's cap (over its requests, rate and workload, which the curve
    does not use) does not stop it."""
    checked = curve_settings(key)
    inputs = engine_inputs(checked, model_config)
    advice = (
        "shorten the output tokens, or run the whole curve with the command line's budget: "
        f"`{curve_command(checked, {'curve_max_concurrency': top})}`"
    )
    return simulate_curve(
        inputs,
        top,
        int(checked["input_tokens"]),  # type: ignore[call-overload]
        int(checked["output_tokens"]),  # type: ignore[call-overload]
        WEB_CURVE_WORK,
        advice,
    )

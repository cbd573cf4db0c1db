"""The continuous-batching engine on the web: ``/sim/engine/`` and ``/sim/engine.json``.

Thin adapters: the engine (felab_sim/engine/serving/) computes, within the web's caps
(felab_sim/engine/sweep/limits.py, ``ENGINE_WEB_LIMITS``); see docs/architecture.md.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods

from serving.ratelimit import rate_limited

from ..charts.engine_charts import (
    distribution_figure,
    measured_kv_recorded,
    planner_figure,
    sweep_figure,
    timeseries_figure,
)
from ..engine.core.numbers import format_with_unit
from ..engine.core.params import ParamError, ParamValue
from ..engine.course.same_settings import DecodeAlone, decode_alone, engine_to_chain, engine_to_step_time
from ..engine.hardware.calibration import VLLM_STEP_OVERHEAD_S
from ..engine.serving.anchors import AnchorRun, anchor_source
from ..engine.serving.engine_params import (
    HARDWARE_FIGURES,
    MODEL_CONFIG,
    PASTED,
    SWEEP_LEVELS,
    EngineInputs,
    pool_json,
    run_json,
)
from ..engine.serving.planner import (
    CURVE_IGNORES,
    PLANNER_PARAMS,
    PRICE_NOTE,
    WEB_CURVE_WORK,
    Plan,
    best_sentence,
    plan,
    server_sentence,
    share_text,
)
from ..engine.serving.run_results import TAIL_PERCENTS, tail_latencies
from ..engine.serving.serving_runs import FIT
from ..engine.serving.step_time import calibration_for, is_measured
from ..engine.serving.validation import (
    ENGINE_RECIPROCAL_NAMES,
    FITTED,
    SCALED_NOTE,
    ExpectedError,
    band_legend,
    engine_expected_errors,
    scaled_from_h200,
    validation_points,
)
from ..engine.sweep.limits import ENGINE_WEB_LIMITS
from ..live import EngineOutcome, cached_engine, curve_inputs, curve_key, engine_curve
from .forms import EngineForm, field_text, repeated_parameter, worded
from .pastes import push_short_settings, submitted, to_short_settings
from .permits import SimulatorBusy, simulation_permit
from .same_settings_links import chain_url, engine_query, step_time_url

# The summary's values as the page shows them: key, label, unit, scale from the engine's unit.
SUMMARY_ROWS = (
    ("ttft_mean_ms", "Mean time to first token (TTFT)", "s", 0.001),
    ("tpot_mean_ms", "Mean time per output token (TPOT)", "ms", 1.0),
    ("latency_mean_ms", "Mean latency", "s", 0.001),
    ("total_s", "Total time", "s", 1.0),
    ("output_tok_s", "Output throughput", "tok/s", 1.0),
    ("max_running", "Most requests running at once", "", 1.0),
)
# The tails printed under a mean: the mean's key → the figure's name in tail_latencies, its label.
TAIL_ROWS = {
    "ttft_mean_ms": ("ttft", "TTFT p50 · p90 · p99", "s", 0.001),
    "tpot_mean_ms": ("tpot", "TPOT p50 · p90 · p99", "ms", 1.0),
}
# Why a summary figure is missing (None in the JSON): it does not exist for this run.
NONE_BECAUSE = {
    "tpot_mean_ms": "no request has a second token to time it by (one output token each)",
    "max_running": "no request stayed running past a step: each finished in the step that prefilled it",
}


def summary_text(summary: dict[str, float | None], key: str, unit: str, scale: float) -> str:
    """A summary figure as the page prints it, or "none" when the run has none (NONE_BECAUSE)."""
    value = summary.get(key)
    return "none" if value is None else format_with_unit(value * scale, unit)


def signed_percent(fraction: float) -> str:
    """An error as the page prints it: "+3.1%", "−0.6%"."""
    text = format_with_unit(100 * fraction, "%")
    return text if text.startswith(("-", "−")) or fraction == 0 else f"+{text}"


def validation_rows() -> list[dict[str, object]]:
    """felab's predictions beside what was measured (felab_sim/engine/serving/validation.py), as printed."""
    return [
        {
            "fitted": point.group == FITTED,
            "what": point.what,
            "metric": point.metric,
            "measured": format_with_unit(point.measured, point.unit),
            "predicted": format_with_unit(point.predicted, point.unit),
            "error": signed_percent(point.error),
            "target": format_with_unit(100 * point.target, "%"),
            "met": point.met,
        }
        for point in validation_points()
    ]


def measured_json(anchor: AnchorRun, summary: dict[str, float]) -> dict[str, object]:
    """The measured vLLM run beside felab's: its means, felab ÷ measured − 1, and where it ran."""
    return {
        "run": anchor.spec.folder,
        "where": anchor.where,
        "source": anchor_source(),
        "summary": anchor.summary,
        "error": anchor.errors(summary),
        "kv_tokens": anchor.kv_tokens,
        "max_running": max(anchor.timeseries["running"]),
        "timeseries": [
            {"t": t, "running": running, "waiting": waiting, "kv_pct": kv}
            for t, running, waiting, kv in zip(
                anchor.timeseries["t"],
                anchor.timeseries["running"],
                anchor.timeseries["waiting"],
                anchor.timeseries["kv_pct"],
                strict=True,
            )
        ],
    }


def _json_error(param: str | None, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"param": param, "message": message}}, status=status)


def _outcome(values: dict[str, ParamValue], model_config: str) -> EngineOutcome:
    """The run, simulated (or found in the process's cache) under one of the host's simulation
    permits: every engine run is a heavy one (felab_sim/pages/permits.py)."""
    with simulation_permit(settings.SIM_PERMITS_DIR, settings.SIM_PERMITS, settings.SIM_PERMIT_WAIT_S):
        return cached_engine(tuple(values.items()), model_config)


def _busy(request: HttpRequest) -> HttpResponse:
    message = (
        f"The simulator is busy with other large runs (at most {settings.SIM_PERMITS} at once); "
        "try again in a moment."
    )
    response: HttpResponse
    if request.path.endswith(".json"):
        response = _json_error(None, message, status=503)
    else:
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = "1"
    return response


@require_GET
@rate_limited("sweep")
def engine_json(request: HttpRequest) -> JsonResponse:
    """A run as JSON (the command's --json, with lesson 03's sweep on this engine and the
    practice server's); bad input is a 400 naming the setting."""
    form = EngineForm({**EngineForm.defaults(), **request.GET.dict()}, repeated_parameter(request.GET))
    if not form.is_valid():
        name, message = _first_error(form)
        return _json_error(name, message)
    values = form.cleaned_data["values"]
    try:
        outcome = _outcome(values, form.cleaned_data[MODEL_CONFIG])
        planned = _plan(values, form.cleaned_data["planner"], form.cleaned_data[MODEL_CONFIG], outcome.inputs)
    except ParamError as error:
        return _json_error(form.field_for(error) or error.param, error.message)
    except SimulatorBusy:
        return _busy(request)  # type: ignore[return-value]
    data = run_json(values, outcome.result, outcome.binding, outcome.inputs)
    if outcome.anchor is not None:
        data["measured"] = measured_json(outcome.anchor, outcome.result.summary)
    data["sweep"] = {
        "levels": list(SWEEP_LEVELS),
        "engine": outcome.sweep,
        "practice_server": outcome.practice_sweep,
    }
    data["curve"] = {"params": form.cleaned_data["planner"], **planned.as_json()}
    return JsonResponse(data)


def _first_error(form: EngineForm) -> tuple[str | None, str]:
    for name, errors in form.errors.items():
        return (None if name == "__all__" else name), str(errors[0])
    return None, "invalid settings"


@require_http_methods(["GET", "POST"])
@rate_limited("sweep")
def engine_page(request: HttpRequest) -> HttpResponse:
    """The engine, explorable: a form whose address holds the settings, redrawn by htmx. The form
    is posted, since it may hold a pasted config.json (felab_sim/pages/pastes.py)."""
    if moved := to_short_settings(request, EngineForm.defaults(), {MODEL_CONFIG}):
        return moved
    sent = submitted(request)
    form = EngineForm({**EngineForm.defaults(), **sent.dict()}, repeated_parameter(sent))
    outcome = planned = None
    refused_alone = False  # the single run refused on a setting the curve does not use
    if form.is_valid():
        values, model_config = form.cleaned_data["values"], form.cleaned_data[MODEL_CONFIG]
        try:
            try:
                outcome = _outcome(values, model_config)
                inputs = outcome.inputs
            except ParamError as error:
                if error.param not in CURVE_IGNORES:
                    raise
                # Over the single run's own cap (its requests, their rate): the curve has its own
                # budget and runs without them, so the page still answers with it.
                form.add_error(form.field_for(error), worded(form, error))
                refused_alone = True
                inputs = curve_inputs(curve_key(values), model_config)
            planned = _plan(values, form.cleaned_data["planner"], model_config, inputs)
        except ParamError as error:
            form.add_error(form.field_for(error), worded(form, error))
        except SimulatorBusy:
            return _busy(request)
    context: dict[str, object] = {
        "form": form,
        "groups": form.field_groups(),
        "outcome": outcome,
        "max_requests": ENGINE_WEB_LIMITS.max_requests,
        "oob": bool(request.htmx),  # the form's messages, redrawn beside the results
        "max_config_chars": ENGINE_WEB_LIMITS.max_config_chars,
        "validation": validation_rows(),
        "nothing_simulated": "Nothing simulated",
    }
    if outcome is not None and planned is not None:
        context |= _results(form.cleaned_data["values"], form.cleaned_data[MODEL_CONFIG], outcome)
        context |= planner_context(planned, form.cleaned_data["planner"], context["query"])  # type: ignore[arg-type]
    elif refused_alone and planned is not None:
        values = form.cleaned_data["values"]
        context |= {
            "hardware": inputs.hardware,
            "scaled_note": SCALED_NOTE,
            "query": engine_query(values),
            "single_run_refused": True,
            "nothing_simulated": "The single run was not simulated (the curve below was)",
        }
        context |= planner_context(planned, form.cleaned_data["planner"], context["query"])  # type: ignore[arg-type]
    template = "felab_sim/engine.html#results" if request.htmx else "felab_sim/engine.html"
    # htmx swaps only successful responses, and the errors must replace the stale results. A
    # refused single run is a 400 beside the curve that still answers.
    status = 200 if (planned is not None and not form.errors) or request.htmx else 400
    response = render(request, template, context, status=status)
    if request.htmx and request.method == "POST":
        push_short_settings(response, request, EngineForm.defaults(), {MODEL_CONFIG})
    patch_vary_headers(response, ["HX-Request"])
    return response


def _plan(
    values: dict[str, ParamValue], planner: dict[str, ParamValue], model_config: str, inputs: EngineInputs
) -> Plan:
    """The planner's curve at these settings (simulated under a permit, or found in the process's
    cache) and what it says at the targets."""
    with simulation_permit(settings.SIM_PERMITS_DIR, settings.SIM_PERMITS, settings.SIM_PERMIT_WAIT_S):
        curve = engine_curve(curve_key(values), model_config, int(planner["curve_max_concurrency"]))  # type: ignore[arg-type]
    typed_in = values["model"] == PASTED or any(values[name] is not None for name in HARDWARE_FIGURES)
    return plan(curve, values, planner, inputs, hardware_typed_in=typed_in)


def _figure(value: float | None, unit: str) -> str:
    return "none" if value is None else format_with_unit(value, unit)


def _share(share: float) -> str:
    return share_text(share)


def planner_context(planned: Plan, planner: dict[str, ParamValue], query: str) -> dict[str, object]:
    """The planner's section as the page prints it: the chart, a row a concurrency (the chart's
    points for a screen reader or a page without JavaScript), the measured runs beside them."""
    errors = planned.errors
    rows = [
        {
            "concurrency": level.concurrency,
            "requests": level.requests,
            "per_gpu": format_with_unit(level.output_tok_s_per_gpu, "tok/s"),
            "per_user": _figure(level.tok_s_per_user, "tok/s"),
            "ttft": format_with_unit(level.ttft_mean_ms, "ms"),
            "tpot": _figure(level.tpot_mean_ms, "ms"),
            "share": _share(level.meeting_share),
            "share_band": f"{_share(level.meeting_share_low)}–{_share(level.meeting_share_high)}",
            "goodput": format_with_unit(level.goodput_tok_s_per_gpu, "tok/s"),
            "usd": f"${level.usd_per_m_tokens:,.2f}",
            "meets": level.meets,
            "best": planned.best is not None and level.concurrency == planned.best.concurrency,
        }
        for level in planned.levels
    ]
    measured = [
        {
            "run_id": point.run.run_id,
            "concurrency": point.run.concurrency,
            "engine": f"{point.run.engine} {point.run.engine_version}",
            "per_gpu": format_with_unit(point.run.output_tok_s_per_gpu, "tok/s"),
            "per_user": format_with_unit(point.tok_s_per_user, "tok/s"),
            "ttft": format_with_unit(point.run.ttft_mean_ms, "ms"),
            "tpot": format_with_unit(point.run.tpot_mean_ms, "ms"),
            "errors": {key: signed_percent(error) for key, error in point.errors().items()},
            "fitted": point.group == FIT,
            "requests": point.run.request_count,
            "source_group": point.run.source_group,
            "source": point.run.source,
        }
        for point in planned.measured
    ]
    planner_query = urlencode(
        {
            param.name: field_text(planner[param.name])
            for param in PLANNER_PARAMS
            if planner[param.name] != param.default
        }
    )
    return {
        "planner": planned,
        "planner_sentence": best_sentence(planned),
        "planner_server": server_sentence(planned.curve),
        "planner_price_note": PRICE_NOTE,
        "planner_rows": rows,
        "planner_measured": measured,
        "planner_other_lengths": [
            {"input": format_with_unit(i, "tokens"), "output": format_with_unit(o, "tokens"), "runs": n}
            for i, o, n in planned.other_lengths
        ],
        "planner_errors": {key: error.text for key, error in errors.items()},
        "planner_chart": planner_figure(planned),
        # The sentence's commands in backticks, shown as code: (text, is a command) in turn.
        "planner_stopped": [
            (part, index % 2 == 1)
            for index, part in enumerate(planned.curve.stopped_because.split("`"))
            if part
        ],
        "planner_budget": format_with_unit(WEB_CURVE_WORK, ""),
        "planner_spent": format_with_unit(round(planned.curve.work), ""),
        "planner_json_query": "&".join(part for part in (query, planner_query) if part),
        "planner_targets": {
            "ttft": format_with_unit(planned.targets.ttft_ms, "ms"),
            "tpot": format_with_unit(planned.targets.tpot_ms, "ms"),
            "attainment": format_with_unit(100 * planned.targets.attainment, "%"),
        },
    }


def summary_rows(
    summary: dict[str, float | None],
    tails: dict[str, float | None],
    measured: dict[str, float],
    errors: dict[str, float],
    expected: dict[str, ExpectedError],
) -> list[dict[str, object]]:
    """The summary table's rows: each mean, and under TTFT's and TPOT's their p50, p90 and p99,
    each with its expected error from the validation table."""
    rows: list[dict[str, object]] = []
    for key, label, unit, scale in SUMMARY_ROWS:
        rows.append(
            {
                "key": key,
                "label": label,
                "value": summary_text(summary, key, unit, scale),
                "why_none": NONE_BECAUSE.get(key, "") if summary.get(key) is None else "",
                "measured": format_with_unit(measured[key] * scale, unit) if key in measured else "",
                "error": signed_percent(errors[key]) if key in errors else "",
                "expected": expected[key].text if key in expected else "",
            }
        )
        if key in TAIL_ROWS:
            name, tail_label, tail_unit, tail_scale = TAIL_ROWS[key]
            keys = [f"{name}_p{percent}_ms" for percent in TAIL_PERCENTS]
            rows.append(
                {
                    "key": f"{name}_percentiles",
                    "label": tail_label,
                    "value": " · ".join(summary_text(tails, k, tail_unit, tail_scale) for k in keys),
                    "parts": [summary_text(tails, k, tail_unit, tail_scale) for k in keys],
                    "why_none": NONE_BECAUSE.get(key, "") if tails[keys[0]] is None else "",
                    "measured": "",
                    "error": "",
                    "expected": expected[keys[0]].text,
                    "tail": True,
                }
            )
    return rows


def _decode_alone(alone: DecodeAlone | None, summary: dict[str, float | None]) -> dict[str, object] | None:
    """step-time's decode step at this run's batch beside the run's mean TPOT, and the fixed cost
    both pay, as the page words them."""
    if alone is None:
        return None
    outputs = alone.result.outputs
    tpot = summary.get("tpot_mean_ms")
    return {
        "batch": format_with_unit(alone.batch, ""),
        "context": format_with_unit(alone.context, "tokens"),
        "step": outputs["step_ms"].text(),
        "speed": outputs["tok_s_per_user"].text(),
        "tpot": format_with_unit(tpot, "ms") if tpot is not None else "",
        "longer": signed_percent(tpot / float(outputs["step_ms"].value) - 1) if tpot is not None else "",  # type: ignore[arg-type]
        "fixed": outputs["fixed_ms"].text(),
        "fixed_formula": outputs["fixed_ms"].formula,
        "vllm_own": format_with_unit(VLLM_STEP_OVERHEAD_S * 1000, "ms"),
        "url": step_time_url(alone.settings),
    }


def _results(values: dict[str, ParamValue], model_config: str, outcome: EngineOutcome) -> dict[str, object]:
    result, inputs = outcome.result, outcome.inputs
    summary = result.summary
    pool = pool_json(result)
    query = engine_query(values)
    calibration = calibration_for(inputs.hardware)
    anchor = outcome.anchor
    measured: dict[str, float] = {}
    if anchor is not None:
        measured = dict(anchor.summary) | {"max_running": max(anchor.timeseries["running"])}
    errors = anchor.errors(summary) if anchor is not None else {}
    expected = engine_expected_errors(inputs.shape.is_moe)
    alone = decode_alone(values, result) if result.requests else None
    return {
        "decode_alone": _decode_alone(alone, summary),
        "step_time_url": step_time_url(engine_to_step_time(values, 1, int(values["input_tokens"]))),  # type: ignore[arg-type]
        "chain_url": chain_url(engine_to_chain(values)),
        "binding": outcome.binding,
        "anchor": anchor,
        "anchor_source": anchor_source() if anchor is not None else "",
        "anchor_kv_recorded": anchor is not None and measured_kv_recorded(anchor.timeseries),
        "rows": summary_rows(summary, tail_latencies(result.requests), measured, errors, expected),
        "expected_legend": band_legend(expected, ENGINE_RECIPROCAL_NAMES),
        "scaled_from_h200": inputs.calibration is None and scaled_from_h200(inputs.hardware.name),
        "scaled_note": SCALED_NOTE,
        "measured_pool": (
            {
                "tokens": format_with_unit(anchor.kv_tokens, "tokens"),
                "error": signed_percent(pool["kv_tokens"] / anchor.kv_tokens - 1),
            }
            if anchor is not None and anchor.kv_tokens
            else None
        ),
        "pool": {
            "tokens": format_with_unit(pool["kv_tokens"], "tokens"),
            "blocks": format_with_unit(pool["kv_blocks"], ""),
            "block_size": pool["block_size"],
            "weights": format_with_unit(pool["weight_bytes"] / 1e9, "GB"),
            "device": format_with_unit(pool["device_bytes"] / 1e9, "GB"),
            "gpus": inputs.settings.tensor_parallel * inputs.settings.data_parallel,
        },
        "preemptions": result.preemptions,
        "requests_run": len(result.requests),
        "timeseries_chart": timeseries_figure(result.timeseries, anchor.timeseries if anchor else None),
        "distribution_chart": distribution_figure(result.requests),
        "sweep_chart": sweep_figure(outcome.sweep, outcome.practice_sweep),
        "sweep_left_off": outcome.sweep is None,
        "calibration": calibration,
        "fitted": is_measured(inputs.hardware.name),
        "hardware": inputs.hardware,
        "query": query,
        "pasted": bool(model_config.strip()),
    }

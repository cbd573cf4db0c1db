"""The continuous-batching engine on the web: ``/sim/engine/`` and ``/sim/engine.json``.

Thin adapters: the engine (felab_sim/engine/batching/) computes, within the web's caps
(felab_sim/engine/limits.py, ``ENGINE_WEB_LIMITS``); see docs/architecture.md.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods

from serving.ratelimit import rate_limited

from .charts.engine_charts import distribution_figure, measured_kv_recorded, sweep_figure, timeseries_figure
from .engine.batching.anchors import AnchorRun, anchor_source
from .engine.batching.engine_params import ENGINE_PARAMS, MODEL_CONFIG, SWEEP_LEVELS, pool_json, run_json
from .engine.batching.step_time import calibration_for, is_measured
from .engine.limits import ENGINE_WEB_LIMITS
from .engine.numbers import format_with_unit
from .engine.params import ParamError, ParamValue
from .engine.validation import FITTED, validation_points
from .forms import EngineForm, field_text, repeated_parameter, worded
from .live import EngineOutcome, cached_engine
from .pastes import push_short_settings, submitted, to_short_settings
from .permits import SimulatorBusy, simulation_permit

# The summary's values as the page shows them: key, label, unit, scale from the engine's unit.
SUMMARY_ROWS = (
    ("ttft_mean_ms", "Mean time to first token (TTFT)", "s", 0.001),
    ("tpot_mean_ms", "Mean time per output token (TPOT)", "ms", 1.0),
    ("latency_mean_ms", "Mean latency", "s", 0.001),
    ("total_s", "Total time", "s", 1.0),
    ("output_tok_s", "Output throughput", "tok/s", 1.0),
    ("max_running", "Most requests running at once", "", 1.0),
)
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
    """felab's predictions beside what was measured (felab_sim/engine/validation.py), as printed."""
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
    permits: every engine run is a heavy one (felab_sim/permits.py)."""
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


def engine_query(values: dict[str, ParamValue], model_config: str) -> str:
    """The address's query for these settings: only what differs from the defaults."""
    changed = {
        param.name: field_text(values[param.name])
        for param in ENGINE_PARAMS
        if values[param.name] != param.default
    }
    if model_config.strip():
        changed[MODEL_CONFIG] = model_config
    return urlencode(changed)


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
    except ParamError as error:
        return _json_error(form.field_for(error) or error.param, error.message)
    except SimulatorBusy:
        return _busy(request)  # type: ignore[return-value]
    data = run_json(values, outcome.result, outcome.binding)
    if outcome.anchor is not None:
        data["measured"] = measured_json(outcome.anchor, outcome.result.summary)
    data["sweep"] = {
        "levels": list(SWEEP_LEVELS),
        "engine": outcome.sweep,
        "practice_server": outcome.practice_sweep,
    }
    return JsonResponse(data)


def _first_error(form: EngineForm) -> tuple[str | None, str]:
    for name, errors in form.errors.items():
        return (None if name == "__all__" else name), str(errors[0])
    return None, "invalid settings"


@require_http_methods(["GET", "POST"])
@rate_limited("sweep")
def engine_page(request: HttpRequest) -> HttpResponse:
    """The engine, explorable: a form whose address holds the settings, redrawn by htmx. The form
    is posted, since it may hold a pasted config.json (felab_sim/pastes.py)."""
    if moved := to_short_settings(request, EngineForm.defaults(), {MODEL_CONFIG}):
        return moved
    sent = submitted(request)
    form = EngineForm({**EngineForm.defaults(), **sent.dict()}, repeated_parameter(sent))
    outcome = None
    if form.is_valid():
        try:
            outcome = _outcome(form.cleaned_data["values"], form.cleaned_data[MODEL_CONFIG])
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
    }
    if outcome is not None:
        context |= _results(form.cleaned_data["values"], form.cleaned_data[MODEL_CONFIG], outcome)
    template = "felab_sim/engine.html#results" if request.htmx else "felab_sim/engine.html"
    # htmx swaps only successful responses, and the errors must replace the stale results.
    status = 200 if outcome is not None or request.htmx else 400
    response = render(request, template, context, status=status)
    if request.htmx and request.method == "POST":
        push_short_settings(response, request, EngineForm.defaults(), {MODEL_CONFIG})
    patch_vary_headers(response, ["HX-Request"])
    return response


def _results(values: dict[str, ParamValue], model_config: str, outcome: EngineOutcome) -> dict[str, object]:
    result, inputs = outcome.result, outcome.inputs
    summary = result.summary
    pool = pool_json(result)
    query = engine_query(values, model_config)
    calibration = calibration_for(inputs.hardware)
    anchor = outcome.anchor
    measured: dict[str, float] = {}
    if anchor is not None:
        measured = dict(anchor.summary) | {"max_running": max(anchor.timeseries["running"])}
    errors = anchor.errors(summary) if anchor is not None else {}
    return {
        "binding": outcome.binding,
        "anchor": anchor,
        "anchor_source": anchor_source() if anchor is not None else "",
        "anchor_kv_recorded": anchor is not None and measured_kv_recorded(anchor.timeseries),
        "rows": [
            {
                "key": key,
                "label": label,
                "value": summary_text(summary, key, unit, scale),
                "why_none": NONE_BECAUSE.get(key, "") if summary.get(key) is None else "",
                "measured": format_with_unit(measured[key] * scale, unit) if key in measured else "",
                "error": signed_percent(errors[key]) if key in errors else "",
            }
            for key, label, unit, scale in SUMMARY_ROWS
        ],
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
    }

"""The calculators on the web: ``/sim/calc/NAME.json`` and the explorable ``/sim/calc/NAME/`` pages.

Thin adapters: the calculators (felab_sim/engine/calculators/) compute; see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from serving.content_cache import kept
from serving.kept_pages import render_kept

from .charts.calc_charts import chart_json
from .engine.calculator import Calculator, Params, Result
from .engine.calculators import CALCULATORS
from .engine.chart import Series
from .engine.numbers import format_with_unit
from .engine.params import ParamError, ParamValue, heading
from .engine.presets import presets_for
from .forms import CalculatorForm, plain_field_rows, repeated_parameter
from .live import cached_chart
from .models import ParameterSet, changed_query


def _json_error(param: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"param": param, "message": message}}, status=status)


def calculator_named(name: str) -> Calculator:
    try:
        return CALCULATORS[name]
    except KeyError:
        raise Http404(f"no calculator named {name!r}") from None


def single_values(request: HttpRequest) -> dict[str, str]:
    """The query string as one value per name; ParamError naming a parameter given twice."""
    if error := repeated_parameter(request.GET):
        raise error
    return request.GET.dict()


@require_GET
def calc_json(request: HttpRequest, name: str) -> JsonResponse:
    """One calculator's result as JSON (the CLI's shape); bad input is a 400 naming the parameter."""
    calculator = calculator_named(name)
    try:
        result = calculator.run(single_values(request))
    except ParamError as error:
        return _json_error(error.param, error.message)
    return JsonResponse(result.as_json())


@dataclass(frozen=True)
class MeasuredRun:
    """A real run shown on a calculator's page: its points over the chart (``series``), its
    numbers by output key for the table's measured column (empty when the page's settings are
    not the ones it measured), and the context of ``template``, the page's section on it."""

    series: list[Series] = field(default_factory=list)
    measured: dict[str, float | None] = field(default_factory=dict)
    context: dict[str, object] = field(default_factory=dict)
    template: str = "felab_sim/practice_run.html"


# Real runs on a calculator's page, by calculator name: each function gets the request (whose
# ``run`` names the run) and the page's validated settings. FelabSimConfig.ready fills it (the
# practice server's prefix-cache run, felab_sim/prefix_runs.py, as "prefix-cache"); see
# docs/architecture.md ("Calculator pages").
MEASURED_RUNS: dict[str, Callable[[HttpRequest, Params], MeasuredRun]] = {}


def show_measured_runs(name: str, runs: Callable[[HttpRequest, Params], MeasuredRun]) -> None:
    """Draw the real runs ``runs`` finds on calculator ``name``'s page."""
    if name not in CALCULATORS:
        raise LookupError(f"{name!r} is not a calculator: its measured runs would show nowhere")
    MEASURED_RUNS[name] = runs


# Not a calculator parameter: the page's own, naming the real run it draws.
RUN_QUERY = "run"


def quoted(value: float, unit: str) -> str:
    """A published measurement as the course printed it: its own digits, not the site's rounding."""
    number = f"{value:,.1f}" if value >= 10 and not float(value).is_integer() else f"{value:,g}"
    return number + unit if unit in {"%", "×"} else f"{number} {unit}"


def _output_rows(result: Result, measured: dict[str, float | None]) -> list[dict[str, str]]:
    return [
        {
            "key": key,
            "label": heading(out.label),
            "value": out.text(),
            "formula": out.formula,
            "measured": format_with_unit(measured.get(key), out.unit) if measured else "",
        }
        for key, out in result.outputs.items()
    ]


def _presets(calculator: Calculator, values: dict[str, ParamValue]) -> list[dict[str, str]]:
    return [
        {
            "name": preset.name,
            "kind": preset.kind,
            "query": changed_query(calculator, {**values, **preset_values}),
            "source": preset.source,
            "note": preset.note,
        }
        for preset, preset_values in presets_for(calculator)
    ]


@require_GET
def calc_page(request: HttpRequest, name: str) -> HttpResponse:
    """An explorable calculator: a GET form whose URL holds the settings, redrawn in place by htmx."""
    calculator = calculator_named(name)
    shows_runs = _shows_runs(request, name)
    if shows_runs:
        # The visitor's own real run, or the form that starts one: worked out for every request.
        context = _page_context(request, calculator, name)
        body = _render_body(request, context)
        computed = context["result"] is not None
    else:
        # One address, one page for everyone: rendered once per content version (the course's
        # parameter sets are listed) and kept for the most recent addresses.
        context = {"calculator": calculator}
        body, computed = kept(
            request,
            ("calc-page", name, bool(request.htmx), request.get_full_path()),
            lambda: _body_and_outcome(request, _page_context(request, calculator, name)),
        )
    status = 200 if computed else 400
    if request.htmx:
        # htmx swaps only successful responses, and the errors must replace the stale results.
        response = HttpResponse(body)
    elif not shows_runs:
        # The page around the kept body is the same for every visitor too, but the header's parts.
        response = render_kept(
            request,
            "felab_sim/calc.html",
            lambda: {**context, "body": body},
            ("calc", name, request.get_full_path()),
            status=status,
        )
    else:
        response = render(request, "felab_sim/calc.html", {**context, "body": body}, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _shows_runs(request: HttpRequest, name: str) -> bool:
    """Whether the page holds anything of one visitor's: a run named in the address, or, for a
    signed-in visitor, the form (with its CSRF token) that starts one."""
    return name in MEASURED_RUNS and (request.user.is_authenticated or RUN_QUERY in request.GET)


def _body_and_outcome(request: HttpRequest, context: dict[str, object]) -> tuple[str, bool]:
    return _render_body(request, context), context["result"] is not None


def _render_body(request: HttpRequest, context: dict[str, object]) -> str:
    """The page's content (felab_sim/calc_body.html), or for htmx its results alone."""
    template = "felab_sim/calc_body.html#results" if request.htmx else "felab_sim/calc_body.html"
    return render_to_string(template, context, request)


def _page_context(request: HttpRequest, calculator: Calculator, name: str) -> dict[str, object]:
    repeated = repeated_parameter(request.GET)
    given = request.GET.dict()
    if name in MEASURED_RUNS:
        given.pop(RUN_QUERY, None)
    form = CalculatorForm(calculator, {**CalculatorForm.defaults(calculator), **given}, repeated)
    result = calculator.run(form.values()) if form.is_valid() else None
    context: dict[str, object] = {
        "calculator": calculator,
        "calculators": CALCULATORS.values(),
        "form": form,
        "fields": plain_field_rows(form),
        "result": result,
        "parameter_sets": ParameterSet.objects.filter(calculator=name),
        # Kept by the settings form, so changing a setting keeps the run drawn.
        "run_query": request.GET.get(RUN_QUERY, "")[:20] if name in MEASURED_RUNS else "",
    }
    if result is not None:
        real_run = MEASURED_RUNS[name](request, result.params) if name in MEASURED_RUNS else None
        series = real_run.series if real_run else []
        context |= {
            "real_run": real_run,
            "rows": _output_rows(result, real_run.measured if real_run else {}),
            "chart": cached_chart(name, result) if not series else chart_json(name, result, series),
            "chart_description": calculator.chart_description,
            "measured": [
                {
                    "what": row.what,
                    "where": row.where,
                    "measured": quoted(row.measured, row.unit),
                    "model": format_with_unit(row.model, row.unit),
                }
                for row in calculator.measured(result.params)
            ],
            "presets": _presets(calculator, result.params),
            "query": changed_query(calculator, result.params),
        }
        if real_run is not None:
            context |= {"real_run_template": real_run.template, **real_run.context}
    return context

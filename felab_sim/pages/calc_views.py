"""The calculators on the web: ``/sim/calc/NAME.json`` and the explorable ``/sim/calc/NAME/`` pages.

Thin adapters: the calculators (felab_sim/engine/calculators/) compute; see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import reswap, retarget

from pagecache.content_cache import kept
from pagecache.kept_pages import render_kept
from serving.ratelimit import rate_limited

from ..charts.calc_charts import chart_json
from ..engine.calculators import CALCULATORS
from ..engine.core.calculator import Calculator, Params, Result
from ..engine.core.chart import Series
from ..engine.core.numbers import format_with_unit
from ..engine.core.params import ParamError, ParamValue, heading
from ..engine.course.presets import presets_for
from ..live import cached_chart
from ..models import ParameterSet, changed_query
from .forms import CalculatorForm, field_text, plain_field_rows, repeated_parameter, worded
from .pastes import (
    CSRF_MARK,
    csrf_input,
    fill_csrf_mark,
    push_short_settings,
    submitted,
    to_short_settings,
)
from .permits import SimulatorBusy
from .same_settings_links import other_pages
from .sim_views import simulator_busy, web_permit


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


def computed(calculator: Calculator, raw: Mapping[str, object]) -> Result:
    """``calculator.run(raw)``; one that simulates runs under one of the host's simulation
    permits (SimulatorBusy when none came free in time)."""
    with web_permit() if calculator.simulates else nullcontext():
        return calculator.run(raw)


def _calculators_busy(request: HttpRequest) -> HttpResponse:
    return simulator_busy(request, "runs", "")


@require_GET
@rate_limited("sweep")
def calc_json(request: HttpRequest, name: str) -> HttpResponse:
    """One calculator's result as JSON (the CLI's shape); bad input is a 400 naming the parameter."""
    calculator = calculator_named(name)
    try:
        result = computed(calculator, single_values(request))
    except ParamError as error:
        return _json_error(error.param, error.message)
    except SimulatorBusy:
        return _calculators_busy(request)
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


def link_query(calculator: Calculator, values: Mapping[str, ParamValue]) -> str:
    """The query string a link on a calculator's page carries: the settings that differ from the
    defaults, but never a paste (felab_sim/pages/pastes.py)."""
    return changed_query(
        calculator, {name: value for name, value in values.items() if name not in _long(calculator)}
    )


def _long(calculator: Calculator) -> set[str]:
    return {param.name for param in calculator.params if param.is_long_text}


def _presets(calculator: Calculator, values: dict[str, ParamValue]) -> list[dict[str, str]]:
    return [
        {
            "name": preset.name,
            "kind": preset.kind,
            "query": link_query(calculator, {**values, **preset_values}),
            "source": preset.source,
            "note": preset.note,
        }
        for preset, preset_values in presets_for(calculator)
    ]


# The field a preset's button sends (on a page holding a paste, where a preset is a button).
PRESET = "preset"


def with_preset(calculator: Calculator, sent: QueryDict) -> QueryDict:
    """The posted settings with the preset its button named set over them, and without the name."""
    sent = sent.copy()
    chosen = sent.pop(PRESET, [""])[-1]
    for preset, values in presets_for(calculator):
        if preset.name == chosen:
            for name, value in values.items():
                sent[name] = field_text(value)
    return sent


@require_http_methods(["GET", "POST"])
@rate_limited("sweep")
def calc_page(request: HttpRequest, name: str) -> HttpResponse:
    """An explorable calculator: a form whose URL holds the settings, redrawn in place by htmx.
    A calculator that takes a paste posts its form (felab_sim/pages/pastes.py)."""
    calculator = calculator_named(name)
    try:
        if request.method == "POST":
            return _posted_calc_page(request, calculator, name)
        return fill_csrf_mark(request, _calc_page(request, calculator, name))
    except SimulatorBusy:
        return _calculators_busy(request)


def _posted_calc_page(request: HttpRequest, calculator: Calculator, name: str) -> HttpResponse:
    """The page for posted settings, a paste among them: worked out for this request, not kept.
    A preset's button posts the form with the preset's name: its values are set over the rest."""
    preset_posted = PRESET in request.POST
    return posted_settings_page(
        request, name, with_preset(calculator, submitted(request)), whole=preset_posted
    )


def posted_settings_page(
    request: HttpRequest, name: str, sent: QueryDict, whole: bool = False
) -> HttpResponse:
    """Calculator ``name``'s page at the posted settings ``sent``, a paste among them. ``whole``:
    an htmx request gets the whole content, form included (the form's values changed), in place
    of the page's; otherwise only the results, as a change in the form gets."""
    calculator = calculator_named(name)
    defaults = CalculatorForm.defaults(calculator)
    long = _long(calculator)
    page = reverse("calc_page", args=[name])
    if moved := to_short_settings(request, defaults, long, sent, page):
        return moved
    context = _page_context(request, calculator, name, sent)
    rendered = _render_body(request, context, whole=whole)
    body = SafeString(rendered.replace(CSRF_MARK, csrf_input(request)))
    status = 200 if context["result"] is not None else 400
    if request.htmx:
        response = HttpResponse(body)  # htmx swaps only successful responses
        push_short_settings(response, request, defaults, long, sent, page)
        if whole:
            retarget(response, "#main")
            reswap(response, "innerHTML")
    else:
        response = render(request, "felab_sim/calc.html", {**context, "body": body}, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _calc_page(request: HttpRequest, calculator: Calculator, name: str) -> HttpResponse:
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


def _render_body(request: HttpRequest, context: dict[str, object], whole: bool = False) -> str:
    """The page's content (felab_sim/calc_body.html), or for htmx its results alone unless ``whole``."""
    results_only = bool(request.htmx) and not whole
    template = "felab_sim/calc_body.html#results" if results_only else "felab_sim/calc_body.html"
    # The presets are redrawn beside the results, out of band: they keep the settings just changed.
    return render_to_string(template, {**context, "oob": results_only}, request)


def _page_context(
    request: HttpRequest, calculator: Calculator, name: str, sent: QueryDict | None = None
) -> dict[str, object]:
    sent = submitted(request) if sent is None else sent
    repeated = repeated_parameter(sent)
    given = sent.dict()
    if name in MEASURED_RUNS:
        given.pop(RUN_QUERY, None)
    form = CalculatorForm(calculator, {**CalculatorForm.defaults(calculator), **given}, repeated)
    result = None
    if form.is_valid():
        try:
            result = computed(calculator, form.values())
        except ParamError as error:  # refused by the computation itself (a model that does not fit)
            form.add_error(error.param if error.param in form.fields else None, worded(form, error))
    context: dict[str, object] = {
        "calculator": calculator,
        "calculators": CALCULATORS.values(),
        "form": form,
        "fields": plain_field_rows(form),
        "result": result,
        "parameter_sets": ParameterSet.objects.filter(calculator=name),
        # Kept by the settings form, so changing a setting keeps the run drawn.
        "run_query": sent.get(RUN_QUERY, "")[:20] if name in MEASURED_RUNS else "",
        # A paste travels in a POST body, with the visitor's CSRF token where the mark is.
        "posts_pastes": any(param.is_long_text for param in calculator.params),
        "csrf_mark": CSRF_MARK,
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
            "query": link_query(calculator, result.params),
            # Links cannot carry it: presets become the form's buttons, and the JSON link says so.
            "pasted": [
                param.label for param in calculator.params if param.is_long_text and result.params[param.name]
            ],
            "other_pages": other_pages(name, result.params),
        }
        if real_run is not None:
            context |= {"real_run_template": real_run.template, **real_run.context}
    return context

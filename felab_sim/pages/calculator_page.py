"""One calculator's page for one request, built in one place: ``CalculatorPage``.

The page holds the calculator and the settings the request sent; from them it builds its form, its
result, its rows, presets, links and real runs, renders its body and frames it: kept per address
when everyone gets the same page, worked out afresh when it holds a visitor's own (a paste, a run).
The views (calc_views.py, chain_views.py) only find the calculator and hand over the request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property

from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import SafeString
from django_htmx.http import reswap, retarget

from pagecache.content_cache import kept
from pagecache.kept_pages import render_kept

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
from .pastes import CSRF_MARK, csrf_input, fill_csrf_mark, push_short_settings, submitted, to_short_settings
from .same_settings_links import other_pages
from .sim_views import web_permit


def calculator_named(name: str) -> Calculator:
    try:
        return CALCULATORS[name]
    except KeyError:
        raise Http404(f"no calculator named {name!r}") from None


def computed(calculator: Calculator, raw: Mapping[str, object]) -> Result:
    """``calculator.run(raw)``; one that simulates runs under one of the host's simulation
    permits (SimulatorBusy when none came free in time)."""
    with web_permit() if calculator.simulates else nullcontext():
        return calculator.run(raw)


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
# The field a preset's button sends (on a page holding a paste, where a preset is a button).
PRESET = "preset"


def quoted(value: float, unit: str) -> str:
    """A published measurement as the course printed it: its own digits, not the site's rounding."""
    number = f"{value:,.1f}" if value >= 10 and not float(value).is_integer() else f"{value:,g}"
    return number + unit if unit in {"%", "×"} else f"{number} {unit}"


def pasted_params(calculator: Calculator) -> set[str]:
    """The names of the calculator's settings that take a paste (a config.json, an engine log)."""
    return {param.name for param in calculator.params if param.is_long_text}


def link_query(calculator: Calculator, values: Mapping[str, ParamValue]) -> str:
    """The query string a link on a calculator's page carries: the settings that differ from the
    defaults, but never a paste (felab_sim/pages/pastes.py)."""
    long = pasted_params(calculator)
    return changed_query(calculator, {name: value for name, value in values.items() if name not in long})


@dataclass
class CalculatorPage:
    """``calculator``'s page at the settings ``sent``. ``posted``: they came in a POST body, a
    paste among them, so the page is worked out for this request and never kept. ``whole``: an
    htmx request gets the whole content, form included (the form's values changed), in place of
    the page's; otherwise only the results, as a change in the form gets."""

    request: HttpRequest
    calculator: Calculator
    sent: QueryDict
    posted: bool = False
    whole: bool = False

    @classmethod
    def asked(cls, request: HttpRequest, name: str) -> CalculatorPage:
        """The page the request asks for: the address's settings, or the posted form's with the
        preset its button named set over them."""
        calculator = calculator_named(name)
        if request.method != "POST":
            return cls(request, calculator, request.GET)
        sent = submitted(request).copy()
        chosen = sent.pop(PRESET, [""])[-1]
        for preset, values in presets_for(calculator):
            if preset.name == chosen:
                for param, value in values.items():
                    sent[param] = field_text(value)
        return cls(request, calculator, sent, posted=True, whole=PRESET in request.POST)

    @property
    def name(self) -> str:
        return self.calculator.name

    @cached_property
    def shows_runs(self) -> bool:
        """Whether the page holds anything of one visitor's: a run named in the address, or, for a
        signed-in visitor, the form (with its CSRF token) that starts one."""
        return self.name in MEASURED_RUNS and (self.request.user.is_authenticated or RUN_QUERY in self.sent)

    def response(self) -> HttpResponse:
        """The page, or for htmx its content; a 400 where the settings are refused."""
        if self.posted:
            response = self._posted_response()
        elif self.shows_runs:
            response = fill_csrf_mark(self.request, self._own_response())
        else:
            response = fill_csrf_mark(self.request, self._kept_response())
        patch_vary_headers(response, ["HX-Request"])
        return response

    def _posted_response(self) -> HttpResponse:
        defaults = CalculatorForm.defaults(self.calculator)
        long = pasted_params(self.calculator)
        address = reverse("calc_page", args=[self.name])
        if moved := to_short_settings(self.request, defaults, long, self.sent, address):
            return moved
        context = self.context()
        body = SafeString(self.body(context).replace(CSRF_MARK, csrf_input(self.request)))
        if not self.request.htmx:
            return self._framed(context, body)
        response = HttpResponse(body)  # htmx swaps only successful responses
        push_short_settings(response, self.request, defaults, long, self.sent, address)
        if self.whole:
            retarget(response, "#main")
            reswap(response, "innerHTML")
        return response

    def _own_response(self) -> HttpResponse:
        """The visitor's own real run, or the form that starts one: worked out for every request."""
        context = self.context()
        body = self.body(context)
        # htmx swaps only successful responses, and the errors must replace the stale results.
        return HttpResponse(body) if self.request.htmx else self._framed(context, body)

    def _kept_response(self) -> HttpResponse:
        """One address, one page for everyone: rendered once per content version (the course's
        parameter sets are listed) and kept for the most recent addresses."""
        address = self.request.get_full_path()
        body, computed_here = kept(
            self.request,
            ("calc-page", self.name, bool(self.request.htmx), address),
            self._body_and_outcome,
        )
        if self.request.htmx:
            return HttpResponse(body)
        # The page around the kept body is the same for every visitor too, but the header's parts.
        return render_kept(
            self.request,
            "felab_sim/calc.html",
            lambda: {"calculator": self.calculator, "body": body},
            ("calc", self.name, address),
            status=200 if computed_here else 400,
        )

    def _body_and_outcome(self) -> tuple[str, bool]:
        context = self.context()
        return self.body(context), context["result"] is not None

    def _framed(self, context: dict[str, object], body: str) -> HttpResponse:
        status = 200 if context["result"] is not None else 400
        return render(self.request, "felab_sim/calc.html", {**context, "body": body}, status=status)

    def body(self, context: dict[str, object]) -> str:
        """The page's content (felab_sim/calc_body.html), or for htmx its results alone unless ``whole``."""
        results_only = bool(self.request.htmx) and not self.whole
        template = "felab_sim/calc_body.html#results" if results_only else "felab_sim/calc_body.html"
        # The presets are redrawn beside the results, out of band: they keep the settings just changed.
        return render_to_string(template, {**context, "oob": results_only}, self.request)

    def context(self) -> dict[str, object]:
        """The form at the sent settings and, where they are accepted, everything the result shows."""
        calculator = self.calculator
        given = self.sent.dict()
        if self.name in MEASURED_RUNS:
            given.pop(RUN_QUERY, None)
        form = CalculatorForm(
            calculator, {**CalculatorForm.defaults(calculator), **given}, repeated_parameter(self.sent)
        )
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
            "parameter_sets": ParameterSet.objects.filter(calculator=self.name),
            # Kept by the settings form, so changing a setting keeps the run drawn.
            "run_query": self.sent.get(RUN_QUERY, "")[:20] if self.name in MEASURED_RUNS else "",
            # A paste travels in a POST body, with the visitor's CSRF token where the mark is.
            "posts_pastes": bool(pasted_params(calculator)),
            "csrf_mark": CSRF_MARK,
        }
        if result is not None:
            context |= self._result_context(result)
        return context

    def _result_context(self, result: Result) -> dict[str, object]:
        calculator = self.calculator
        runs = MEASURED_RUNS.get(self.name)
        real_run = runs(self.request, result.params) if runs else None
        series = real_run.series if real_run else []
        measured = real_run.measured if real_run else {}
        context: dict[str, object] = {
            "real_run": real_run,
            "rows": [
                {
                    "key": key,
                    "label": heading(out.label),
                    "value": out.text(),
                    "formula": out.formula,
                    "measured": format_with_unit(measured.get(key), out.unit) if measured else "",
                }
                for key, out in result.outputs.items()
            ],
            "chart": cached_chart(self.name, result) if not series else chart_json(self.name, result, series),
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
            "presets": [
                {
                    "name": preset.name,
                    "kind": preset.kind,
                    "query": link_query(calculator, {**result.params, **preset_values}),
                    "source": preset.source,
                    "note": preset.note,
                }
                for preset, preset_values in presets_for(calculator)
            ],
            "query": link_query(calculator, result.params),
            # Links cannot carry it: presets become the form's buttons, and the JSON link says so.
            "pasted": [
                param.label for param in calculator.params if param.is_long_text and result.params[param.name]
            ],
            "other_pages": other_pages(self.name, result.params),
        }
        if real_run is not None:
            context |= {"real_run_template": real_run.template, **real_run.context}
        return context

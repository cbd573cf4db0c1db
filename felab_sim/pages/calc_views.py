"""The calculators on the web: ``/sim/calc/NAME.json`` and the explorable ``/sim/calc/NAME/`` pages.

Thin adapters: the calculators (felab_sim/engine/calculators/) compute, and a page's parts are built
by ``CalculatorPage`` (calculator_page.py); see docs/architecture.md.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_http_methods

from serving.ratelimit import rate_limited

from ..engine.core.params import ParamError
from .calculator_page import CalculatorPage, calculator_named, computed
from .forms import repeated_parameter
from .permits import SimulatorBusy
from .sim_views import simulator_busy


def single_values(request: HttpRequest) -> dict[str, str]:
    """The query string as one value per name; ParamError naming a parameter given twice."""
    if error := repeated_parameter(request.GET):
        raise error
    return request.GET.dict()


@require_GET
@rate_limited("sweep")
def calc_json(request: HttpRequest, name: str) -> HttpResponse:
    """One calculator's result as JSON (the CLI's shape); bad input is a 400 naming the parameter."""
    calculator = calculator_named(name)
    try:
        result = computed(calculator, single_values(request))
    except ParamError as error:
        return JsonResponse({"error": {"param": error.param, "message": error.message}}, status=400)
    except SimulatorBusy:
        return simulator_busy(request, "runs", "")
    return JsonResponse(result.as_json())


@require_http_methods(["GET", "POST"])
@rate_limited("sweep")
def calc_page(request: HttpRequest, name: str) -> HttpResponse:
    """An explorable calculator: a form whose URL holds the settings, redrawn in place by htmx.
    A calculator that takes a paste posts its form (felab_sim/pages/pastes.py)."""
    page = CalculatorPage.asked(request, name)
    try:
        return page.response()
    except SimulatorBusy:
        return simulator_busy(request, "runs", "")

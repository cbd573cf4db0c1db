"""The calculators on the web: ``/sim/calc/NAME.json`` and the explorable ``/sim/calc/NAME/`` pages.

Thin adapters: the calculators (felab_sim/core/calculators/) compute; see docs/architecture.md.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from .core.calculator import Calculator
from .core.calculators import CALCULATORS
from .core.params import ParamError


def _json_error(param: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"param": param, "message": message}}, status=status)


def calculator_named(name: str) -> Calculator:
    try:
        return CALCULATORS[name]
    except KeyError:
        raise Http404(f"no calculator named {name!r}") from None


def single_values(request: HttpRequest) -> dict[str, str]:
    """The query string as one value per name; ParamError naming a parameter given twice."""
    for key, values in request.GET.lists():
        if len(values) > 1:
            raise ParamError(key[:60], f"{key[:60]} is given {len(values)} times; give it once")
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

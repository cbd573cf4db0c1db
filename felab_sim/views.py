from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from config.ratelimit import rate_limited

from . import plots
from .forms import SweepForm
from .live import cached_sweep
from .model import ParamError, SweepParams, SweepResult, check_web_limits


def _json_error(param: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"param": param, "message": message}}, status=status)


@require_GET
@rate_limited("sweep")
def sweep_json(request: HttpRequest) -> JsonResponse:
    """The simulated sweep as JSON, with DESIGN.md's shape; bad input is a 400 naming the parameter."""
    for key, values in request.GET.lists():
        if len(values) > 1:
            return _json_error(key, f"{key} is given {len(values)} times; give it once")
    try:
        params = SweepParams.from_flat(request.GET.dict())
        check_web_limits(params)
    except ParamError as error:
        return _json_error(error.param, error.message)
    return JsonResponse(cached_sweep(params).as_dict())


@require_GET
@rate_limited("sweep")
def sim_page(request: HttpRequest) -> HttpResponse:
    """The explorable simulator: a GET form whose URL holds the parameters."""
    form = SweepForm({**SweepForm.defaults(), **request.GET.dict()})
    result = cached_sweep(form.params) if form.is_valid() else None
    context = {
        "form": form,
        "result": result,
        "figure": plots.sweep_figure(result) if result else None,
        "summary": capacity_sentence(result) if result else "",
        "rows": published_beside(result) if result else [],
    }
    template = "felab_sim/sim.html#results" if request.htmx else "felab_sim/sim.html"
    response = render(request, template, context, status=200 if result else 400)
    patch_vary_headers(response, ["HX-Request"])
    return response


def capacity_sentence(result: SweepResult) -> str:
    """One sentence: where capacity is, and why the next level misses the SLO."""
    slo = f"{result.params.slo_ms:g} ms"
    levels = result.levels
    slots = result.params.server.slots
    if result.capacity is None:
        first = levels[0]
        return (
            f"No level meets the SLO: already at C = {first.conc}, TTFT p95 is {first.ttft_p95_ms:,.1f} ms, "
            f"over the {slo} target, so capacity is below {first.conc}."
        )
    at_capacity = next(level for level in levels if level.conc == result.capacity)
    beyond = next((level for level in levels if level.conc > result.capacity), None)
    sentence = (
        f"Capacity is C = {result.capacity}: the highest level whose TTFT p95 "
        f"({at_capacity.ttft_p95_ms:,.1f} ms) stays within the {slo} SLO."
    )
    if beyond is None:
        return sentence + " Every level meets it; add higher levels to find the knee."
    why = (
        f"requests queue for one of the {slots} slots"
        if beyond.conc > slots
        else "prefill and the slower shared steps push the first token late"
    )
    return sentence + f" At C = {beyond.conc}, {why}, and TTFT p95 jumps to {beyond.ttft_p95_ms:,.1f} ms."


def published_beside(result: SweepResult) -> list[tuple[object, dict | None]]:
    """Each simulated level with the course's published figures for it, when it has them."""
    published = {row["conc"]: row for row in plots.PUBLISHED}
    return [(level, published.get(level.conc)) for level in result.levels]

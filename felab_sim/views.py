from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from config.ratelimit import rate_limited

from . import plots
from .core.numbers import format_figure
from .forms import SweepForm
from .live import cached_figure, cached_sweep, sim_query
from .model import ParamError, SweepParams, SweepResult, check_web_limits
from .models import SweepRun
from .runs import BROWSER_LIMITS, STALE_AFTER, SweepBusy, reap_stale_runs, start_run


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
    rows = published_beside(result) if result else []
    overlay = _run_to_overlay(request.GET.get("run"))
    measured = [(f"run {overlay.pk}", overlay.measured_rows())] if overlay else []
    context = {
        "form": form,
        "result": result,
        "figure": _sim_figure(result, measured),
        "summary": capacity_sentence(result) if result else "",
        "rows": rows,
        "course_run_shown": any(course for _, course in rows),
        "course_run_settings": plots.COURSE_RUN_SETTINGS,
        "overlay": overlay,
        "recent_runs": SweepRun.objects.finished()[:5],
        "running": SweepRun.objects.running().first(),
        "browser_limits": BROWSER_LIMITS,
    }
    template = "felab_sim/sim.html#results" if request.htmx else "felab_sim/sim.html"
    response = render(request, template, context, status=200 if result else 400)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _sim_figure(result: SweepResult | None, measured: list) -> str | None:
    if result is None:
        return None
    if measured:  # a stored run drawn over the model: rare, not worth a cache entry
        return plots.sweep_figure(result, measured=measured)
    return cached_figure(result.params)


def _run_to_overlay(run_id: str | None) -> SweepRun | None:
    if not run_id or not run_id.isdigit():
        return None
    return SweepRun.objects.finished().prefetch_related("levels").filter(pk=int(run_id)).first()


@require_POST
@login_required
@rate_limited("sweep")
def run_start(request: HttpRequest) -> HttpResponse:
    """Start a real sweep against the practice server; one at a time for the whole site."""
    fields = {key: request.POST[key] for key in ("levels", "max_tokens", "slo_ms") if request.POST.get(key)}
    try:
        run = start_run(SweepParams.from_flat(fields), request.user)
    except ParamError as error:
        messages.error(request, f"The sweep did not start: {error.message}")
        return redirect(f"{reverse('sim')}#real-sweep")
    except SweepBusy as busy:
        running = busy.running
        when = timezone.localtime(running.started_at).strftime("%H:%M:%S UTC") if running else "just now"
        messages.error(
            request, f"A sweep is already running (started at {when}); watch it or wait for it to end."
        )
        return redirect(running.get_absolute_url() if running else reverse("sim"))
    return redirect(run.get_absolute_url())


@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(
        SweepRun.objects.select_related("started_by").prefetch_related("levels"), pk=run_id
    )
    if run.is_running and run.heartbeat_at < timezone.now() - STALE_AFTER:
        # Its worker process ended: show it failed, not running forever. Checked before
        # writing, since watchers poll this page every second.
        reap_stale_runs()
        run.refresh_from_db()
    context: dict[str, object] = {"run": run, "levels": list(run.levels.all())}
    if run.state == SweepRun.State.DONE:
        params = run.sweep_params()
        model = cached_sweep(params)
        context["figure"] = plots.sweep_figure(
            model, show_published=False, measured=[("measured", run.measured_rows())]
        )
        context["sim_url"] = f"{reverse('sim')}?{sim_query(params)}&run={run.pk}"
    template = "felab_sim/run.html#progress" if request.htmx else "felab_sim/run.html"
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request"])
    return response


def capacity_sentence(result: SweepResult) -> str:
    """One sentence: where capacity is, and why the next level misses the SLO."""
    slo = format_figure(result.params.slo_ms, "ms")
    levels = result.levels
    slots = result.params.server.slots
    if result.capacity is None:
        first = levels[0]
        return (
            f"No level meets the SLO: already at C = {first.conc}, TTFT p95 is {format_figure(first.ttft_p95_ms, 'ms')}, "
            f"over the {slo} target, so capacity is below {first.conc}."
        )
    at_capacity = next(level for level in levels if level.conc == result.capacity)
    beyond = next((level for level in levels if level.conc > result.capacity), None)
    sentence = (
        f"Capacity is C = {result.capacity}: the highest level whose TTFT p95 "
        f"({format_figure(at_capacity.ttft_p95_ms, 'ms')}) stays within the {slo} SLO."
    )
    if beyond is None:
        return (
            f"Every level you swept meets the {slo} SLO, up to C = {result.capacity} "
            f"(TTFT p95 {format_figure(at_capacity.ttft_p95_ms, 'ms')}): capacity is at least "
            f"{result.capacity}. Add higher levels to find the knee."
        )
    why = (
        f"requests queue for one of the {slots} slots"
        if beyond.conc > slots
        else "prefill and the slower shared steps push the first token late"
    )
    return (
        sentence
        + f" At C = {beyond.conc}, {why}, and TTFT p95 jumps to {format_figure(beyond.ttft_p95_ms, 'ms')}."
    )


def published_beside(result: SweepResult) -> list[tuple[object, dict | None]]:
    """Each simulated level with the course's published figures for it, when it has them."""
    published = {row["conc"]: row for row in plots.published_for(result.params)}
    return [(level, published.get(level.conc)) for level in result.levels]

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from pagecache.kept_pages import render_kept
from serving.ratelimit import rate_limited

from ..charts import plots
from ..engine.calculators import CALCULATORS
from ..engine.core.params import ParamError
from ..engine.sweep.course_run import COURSE_RUN_SETTINGS, published_beside
from ..engine.sweep.limits import WEB_LIMITS, check_web_limits
from ..engine.sweep.metrics import SweepResult, capacity_sentence
from ..engine.sweep.sweep_params import SweepParams
from ..live import cached_figure, cached_sweep, sim_query
from ..models import Run
from ..runs import (
    STALE_AFTER,
    AlreadyWaiting,
    give_lost_runs_a_task,
    reap_dead_runs,
    start_run,
    starter_shown_to,
)
from .forms import RealSweepForm, SweepForm, plain_field_rows, repeated_parameter, worded
from .permits import SimulatorBusy, simulation_permit


def _json_error(param: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"param": param, "message": message}}, status=status)


@require_GET
@rate_limited("sweep")
def sweep_json(request: HttpRequest) -> JsonResponse:
    """The simulated sweep as JSON, with the shape in docs/architecture.md; bad input is a 400 naming the parameter."""
    if repeated := repeated_parameter(request.GET):
        return _json_error(repeated.param, repeated.message)
    try:
        params = SweepParams.from_flat(request.GET.dict())
        check_web_limits(params)
    except ParamError as error:
        return _json_error(error.param, error.message)
    try:
        with _simulation_permit(params):
            return JsonResponse(cached_sweep(params).as_dict())
    except ParamError as error:  # stopped by the simulator's own count of events
        return _json_error(error.param, error.message)
    except SimulatorBusy:
        return simulator_busy(request)


@require_GET
@rate_limited("sweep")
def sim_page(request: HttpRequest) -> HttpResponse:
    """The explorable simulator: a GET form whose URL holds the parameters."""
    try:
        if not request.GET and not request.htmx:
            # The default page is the same for every visitor but its per_visitor parts (the
            # nav, the run queue, the run form): kept per content version (pagecache/kept_pages.py).
            response = render_kept(request, "felab_sim/sim.html", lambda: _sim_context(request)[0], ("sim",))
        else:
            context, status = _sim_context(request)
            template = "felab_sim/sim.html#results" if request.htmx else "felab_sim/sim.html"
            response = render(request, template, context, status=status)
    except SimulatorBusy:
        return simulator_busy(request)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _sim_context(request: HttpRequest) -> tuple[dict, int]:
    """The page's context for the settings in the address, and its status (400 for bad ones)."""
    form = SweepForm({**SweepForm.defaults(), **request.GET.dict()}, repeated_parameter(request.GET))
    overlay = _run_to_overlay(request.GET.get("run"))
    measured = [(f"run {overlay.pk}", overlay.measured_rows())] if overlay else []
    result, figure = None, None
    if form.is_valid():
        params = form.cleaned_data["params"]
        try:
            with _simulation_permit(params):
                result = cached_sweep(params)
                figure = _sim_figure(result, measured)
        except ParamError as error:  # stopped by the simulator's own count of events
            form.add_error(error.param if error.param in form.fields else None, worded(form, error))
    rows = published_beside(result) if result else []
    context = {
        "form": form,
        "fields": plain_field_rows(form),
        "result": result,
        "figure": figure,
        "summary": capacity_sentence(result) if result else "",
        "rows": rows,
        "course_run_shown": any(course for _, course in rows),
        "course_run_settings": COURSE_RUN_SETTINGS,
        "overlay": overlay,
        # The measured runs' list is kept by it (sim.html): a key that is None without an overlay,
        # where overlay.pk would make the template swallow an exception on every request.
        "overlay_pk": overlay.pk if overlay else None,
        "query": request.GET.urlencode(),
        "calculators": CALCULATORS.values(),
    }
    return context, 200 if result else 400


def _simulation_permit(params: SweepParams) -> AbstractContextManager:
    """One of the host's simulation permits for a heavy sweep (felab_sim/pages/permits.py); none for a light one."""
    if WEB_LIMITS.work(params) <= settings.SIM_LIGHT_WORK:
        return nullcontext()
    return web_permit()


def web_permit() -> AbstractContextManager:
    """One of the host's simulation permits, as the settings size them; SimulatorBusy after the wait."""
    return simulation_permit(settings.SIM_PERMITS_DIR, settings.SIM_PERMITS, settings.SIM_PERMIT_WAIT_S)


def simulator_busy(
    request: HttpRequest, what: str = "sweeps", advice: str = ", or use fewer or lower levels"
) -> HttpResponse:
    """The 503 a request gets when every simulation permit stayed taken (JSON for a .json address)."""
    message = (
        f"The simulator is busy with other large {what} (at most {settings.SIM_PERMITS} at once); "
        f"try again in a moment{advice}."
    )
    if request.path.endswith(".json"):
        response: HttpResponse = JsonResponse({"error": {"param": None, "message": message}}, status=503)
    else:
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = "1"
    return response


def _sim_figure(result: SweepResult, measured: list) -> str:
    if measured:  # a stored run drawn over the model: rare, not worth a cache entry
        return plots.sweep_figure(result, measured=measured)
    return cached_figure(result.params)


def _run_to_overlay(run_id: str | None) -> Run | None:
    # isdigit() alone also accepts "²" and other digits that int() refuses; the length bound
    # keeps the number within the primary key's range.
    if not run_id or not (run_id.isascii() and run_id.isdigit()) or len(run_id) > 18:
        return None
    return Run.objects.sweeps().finished().prefetch_related("levels").filter(pk=int(run_id)).first()


@require_POST
@login_required
@rate_limited("sweep")
def run_start(request: HttpRequest) -> HttpResponse:
    """Record a real sweep against the practice server; its task measures it when its turn comes."""
    try:
        run = start_run(SweepParams.from_flat(RealSweepForm.given(request.POST)), request.user)
    except ParamError as error:
        messages.error(request, f"The sweep did not start: {error.message}")
        return redirect(f"{reverse('sim')}#real-sweep")
    except AlreadyWaiting as waiting:
        messages.error(request, "You already have a run waiting or running; here it is.")
        return redirect(waiting.run.get_absolute_url() if waiting.run else reverse("sim"))
    return redirect(run.get_absolute_url())


@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(
        Run.objects.select_related("started_by").prefetch_related("levels", "orders"), pk=run_id
    )
    if run.is_running and run.heartbeat_at < timezone.now() - STALE_AFTER:
        # Its worker process ended: show it failed, not running forever. Checked before
        # writing, since watchers poll this page every second.
        reap_dead_runs()
        run.refresh_from_db()
    elif run.is_queued:
        give_lost_runs_a_task(Run.objects.filter(pk=run.pk))
    if run.is_prefix_cache:
        return _prefix_cache_run_progress(request, run)
    context: dict[str, object] = {
        "run": run,
        "starter": starter_shown_to(run, request.user),
        "levels": list(run.levels.all()),
        "wait": run.wait_estimate(),
    }
    if run.state == Run.State.DONE:
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


def _prefix_cache_run_progress(request: HttpRequest, run: Run) -> HttpResponse:
    """A prefix-cache run is watched on its calculator's page, which polls here for its progress
    and reloads itself once the run is done, to draw it over the model."""
    if not request.htmx:
        return redirect(run.get_absolute_url())
    context = {
        "run": run,
        "starter": starter_shown_to(run, request.user),
        "orders": list(run.orders.all()),
        "wait": run.wait_estimate(),
    }
    response = render(request, "felab_sim/practice_run.html#progress", context)
    if run.state == Run.State.DONE:
        response["HX-Refresh"] = "true"
    patch_vary_headers(response, ["HX-Request"])
    return response

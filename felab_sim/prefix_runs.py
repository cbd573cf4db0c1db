"""Lesson 06's prefix-cache run measured on the practice server from its calculator's page,
/sim/calc/prefix-cache/: the POST that queues it, and what the page shows of it.

The run itself is a Run of kind prefix-cache, queued and measured like a sweep
(felab_sim/runs.py); the page names it with ``?run=N`` and draws it over the model through
``calculator_page.MEASURED_RUNS``, where FelabSimConfig.ready puts it. See docs/architecture.md
("Calculator pages").
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from serving.ratelimit import rate_limited

from .engine.calculators import CALCULATORS
from .engine.core.calculator import Params
from .engine.core.chart import Series
from .engine.core.params import ParamError
from .engine.sweep.limits import PREFIX_CACHE_LIMITS
from .engine.sweep.prefix_cache_run import MAX_PREFIX_REQUESTS, PREFIX_ORDERS, PrefixCacheSetup
from .models import PrefixCacheRunOrder, Run
from .pages.calculator_page import MeasuredRun
from .runs import AlreadyWaiting, start_prefix_cache_run, starter_shown_to

NAME = "prefix-cache"
SETUP_DEFAULTS = PrefixCacheSetup()


def _calc_url(query: str = "") -> str:
    return reverse("calc_page", args=[NAME]) + (f"?{query}" if query else "")


def _setup_from_post(request: HttpRequest) -> PrefixCacheSetup:
    """The run's settings as the form sent them; ParamError naming the one to change."""
    declared = {param.name: param for param in CALCULATORS[NAME].params}
    values: dict[str, int] = {}
    for name in ("prefix_chars", "suffix_chars"):
        value = declared[name].parse(request.POST.get(name, ""))
        if not isinstance(value, int):  # the declaration says int; kept honest for the type checker
            raise ParamError(name, f"{name} must be a whole number")
        values[name] = value
    text = request.POST.get("requests", "").strip() or str(SETUP_DEFAULTS.requests)
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        raise ParamError("requests", f"requests must be a whole number from 2 to {MAX_PREFIX_REQUESTS}")
    return PrefixCacheSetup(**values, requests=int(text))


@require_POST
@login_required
@rate_limited("sweep")
def prefix_cache_run_start(request: HttpRequest) -> HttpResponse:
    """Queue a prefix-cache run of the page's settings, both orders, against the practice server."""
    try:
        setup = _setup_from_post(request)
        run = start_prefix_cache_run(setup, request.user)
    except ParamError as error:
        messages.error(request, f"The run did not start: {error.message}")
        kept = {name: request.POST.get(name, "") for name in ("prefix_chars", "suffix_chars")}
        query = urlencode({name: text for name, text in kept.items() if text.isascii() and text.isdigit()})
        return redirect(_calc_url(query) + "#practice-run")
    except AlreadyWaiting as waiting:
        messages.error(request, "You already have a run waiting or running; here it is.")
        return redirect(waiting.run.get_absolute_url() if waiting.run else _calc_url())
    return redirect(run.get_absolute_url())


def run_named(raw: str | None) -> Run | None:
    """The prefix-cache run ``?run=`` names, in any state; None for anything else."""
    # isdigit() alone also accepts "²" and other digits that int() refuses; the length bound
    # keeps the number within the primary key's range.
    if not raw or not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        return None
    return (
        Run.objects.prefix_cache_runs()
        .select_related("started_by")
        .prefetch_related("orders")
        .filter(pk=int(raw))
        .first()
    )


def run_series(run: Run, orders: dict[str, PrefixCacheRunOrder]) -> list[Series]:
    """A finished run's points over the chart: x is its shared part's length, y a TTFT; each
    point drawn in the colour of the model curve it measures."""
    x = run.params["prefix_chars"]
    shared, variable = orders["shared-first"], orders["variable-first"]

    def cached(order: PrefixCacheRunOrder) -> str:
        if order.cached_tokens is None or order.prompt_tokens is None:
            return "cached tokens not reported"
        return f"{order.cached_tokens:,} of {order.prompt_tokens:,} tokens cached"

    return [
        Series(f"run {run.pk}, first request", [x, x], [shared.ttft_cold_ms, variable.ttft_cold_ms], "cold"),
        Series(
            f"run {run.pk}, repeat, shared part first ({cached(shared)})",
            [x],
            [shared.ttft_warm_ms],
            "shared-first",
        ),
        Series(
            f"run {run.pk}, repeat, variable part first ({cached(variable)})",
            [x],
            [variable.ttft_warm_ms],
            "variable-first",
        ),
    ]


def prefix_cache_run(request: HttpRequest, params: Params) -> MeasuredRun:
    """What the calculator page shows of the run ``?run=`` names, at the page's settings
    ``params``, and the form that starts one of them."""
    run = run_named(request.GET.get("run"))
    context: dict[str, object] = {
        "run": run,
        "limits": PREFIX_CACHE_LIMITS,
        "setup_defaults": SETUP_DEFAULTS,
        "settings_query": "",
    }
    if run is None:
        return MeasuredRun(context=context)
    orders = {order.order: order for order in run.orders.all()}
    context |= {
        "orders": list(orders.values()),
        "wait": run.wait_estimate(),
        "starter": starter_shown_to(run, request.user),
    }
    done = (
        run.state == Run.State.DONE
        and set(orders) == set(PREFIX_ORDERS)
        and all(order.is_finished for order in orders.values())
    )
    if not done:
        return MeasuredRun(context=context)
    same_settings = run.calculator_settings() == {
        "prefix_chars": params["prefix_chars"],
        "suffix_chars": params["suffix_chars"],
    }
    measured = orders[params["order"]].outputs() if same_settings and params["order"] in orders else {}
    context |= {"same_settings": same_settings, "order_shown": orders.get(params["order"])}
    return MeasuredRun(series=run_series(run, orders), measured=measured, context=context)

"""The chain from physics to money on the web: ``/sim/chain/`` and ``/sim/chain.json``.

Thin adapters: felab_sim/engine/course/chain.py walks the chain; docs/chain.md says what each step assumes.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from pagecache.content_cache import kept
from serving.ratelimit import rate_limited

from ..engine.calculators import CALCULATORS
from ..engine.core.params import ParamError, ParamValue
from ..engine.course import chain, chain_settings
from ..engine.course.same_settings import chain_to_engine
from .calc_views import single_values
from .calculator_page import CalculatorPage, calculator_named, link_query
from .forms import ChainForm, field_text, repeated_parameter, worded
from .pastes import CSRF_MARK, csrf_input, holds_paste, push_short_settings, submitted, to_short_settings
from .permits import SimulatorBusy
from .same_settings_links import PASTED_IN_CHAIN, chain_query, engine_url
from .sim_views import simulator_busy, web_permit


def step_url(step: chain.Step) -> str:
    """The step's calculator page at the settings the chain gave it, scrolled to its output; a
    pasted config.json is left out, as from every link (felab_sim/pages/pastes.py)."""
    query = link_query(CALCULATORS[step.calculator], step.calculator_params)
    page = reverse("calc_page", args=[step.calculator])
    return f"{page}{'?' + query if query else ''}#output-{step.output}"


# Always written out, so the command reads as what it asks even where they are the defaults.
NAMED_IN_COMMAND = ("model", "precision", "hardware")


def chain_command(values: dict[str, ParamValue]) -> str:
    """``manage.py chain`` with the flags that print this chain: the model, precision and GPU,
    then every other setting that differs from the defaults (a pasted config.json as a file)."""
    words = ["manage.py", "chain"]
    pasted = bool(values["model_config"])
    for param in chain_settings.PARAMS:
        value = values[param.name]
        if param.name == "model_config":
            words += [param.flag, "config.json"] if pasted else []
        elif param.name == "model" and pasted:
            continue  # the pasted config wins over the preset
        elif param.name in NAMED_IN_COMMAND or value != chain_settings.DEFAULTS[param.name]:
            words += [param.flag, shlex.quote(field_text(value))]
    return " ".join(words)


def _walked(raw: Mapping[str, object]) -> chain.Chain:
    """The chain walked under one of the host's simulation permits, as every simulator page's work."""
    with web_permit():
        return chain.walk(raw)


@require_GET
@rate_limited("sweep")
def chain_json(request: HttpRequest) -> HttpResponse:
    """The chain as JSON (``manage.py chain --json``'s shape); bad input is a 400 naming the setting."""
    try:
        walked = _walked(single_values(request))
    except ParamError as error:
        return JsonResponse({"error": {"param": error.param, "message": error.message}}, status=400)
    except SimulatorBusy:
        return simulator_busy(request, "runs", "")
    return JsonResponse(walked.as_json(step_url))


@require_http_methods(["GET", "POST"])
@rate_limited("sweep")
def chain_page(request: HttpRequest) -> HttpResponse:
    """The chain, explorable: a form whose address holds the settings, redrawn in place by htmx.
    The form is posted, since it may hold a pasted config.json (felab_sim/pages/pastes.py).

    One address, one page for everyone: its content is rendered once and kept for the most recent
    addresses, as a calculator page's is; a posted one is worked out for its request."""
    return _chain_response(request)


def _chain_response(request: HttpRequest) -> HttpResponse:
    """The chain's page for this request, posted to the page or to a step (chain_step)."""
    page = reverse("chain_page")
    if moved := to_short_settings(request, ChainForm.defaults(), PASTED_IN_CHAIN, path=page):
        return moved
    try:
        if request.method == "POST":
            body, walked = _body_and_outcome(request)
        else:
            body, walked = kept(
                request,
                ("chain-page", bool(request.htmx), request.get_full_path()),
                lambda: _body_and_outcome(request),
            )
    except SimulatorBusy:
        return simulator_busy(request, "runs", "")
    body = SafeString(body.replace(CSRF_MARK, csrf_input(request)))
    if request.htmx:
        # htmx swaps only successful responses, and the errors must replace the stale results.
        response = HttpResponse(body)
        if request.method == "POST":
            push_short_settings(response, request, ChainForm.defaults(), PASTED_IN_CHAIN, path=page)
    else:
        response = render(request, "felab_sim/chain.html", {"body": body}, status=200 if walked else 400)
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_POST
@rate_limited("sweep")
def chain_step(request: HttpRequest, key: str) -> HttpResponse:
    """A step's calculator page at the settings the chain gave it, the pasted config.json among
    them: on a chain holding a paste, a step's button posts the chain's form here, since no
    link can carry the paste. Settings the chain refuses show the chain's page with the refusal."""
    try:
        sent = submitted(request)
        form = ChainForm({**ChainForm.defaults(), **sent.dict()}, repeated_parameter(sent))
        walked = _walked(form.cleaned_data["values"]) if form.is_valid() else None
        step = walked.step(key) if walked is not None else None
    except (ParamError, KeyError):  # refused by the walk, or a step it does not reach
        step = None
    except SimulatorBusy:
        return simulator_busy(request, "runs", "")
    if step is None:
        return _chain_response(request)
    settings = QueryDict(mutable=True)
    for name, value in step.calculator_params.items():
        settings[name] = field_text(value)
    return CalculatorPage(
        request, calculator_named(step.calculator), settings, posted=True, whole=True
    ).response()


def _users(walked: chain.Chain) -> int:
    """The users a replica takes, as the chain worked them out (1 where it stopped before)."""
    try:
        return int(walked.step("decode").calculator_params["batch"])  # type: ignore[arg-type]
    except KeyError:
        return 1


def _body_and_outcome(request: HttpRequest) -> tuple[str, bool]:
    """The page's content (felab_sim/chain_body.html), or for htmx its results alone, and
    whether the chain was walked (False: the settings were refused)."""
    sent = submitted(request)
    form = ChainForm({**ChainForm.defaults(), **sent.dict()}, repeated_parameter(sent))
    walked = None
    if form.is_valid():
        try:
            walked = _walked(form.cleaned_data["values"])
        except ParamError as error:
            form.add_error(error.param if error.param in form.fields else None, worded(form, error))
    context: dict[str, object] = {
        "form": form,
        "groups": form.field_groups(),
        "chain": walked,
        "oob": bool(request.htmx),  # the form's messages, redrawn beside the results
        "csrf_mark": CSRF_MARK,
    }
    if walked is not None:
        context |= {
            "steps": [
                {
                    "key": step.key,
                    "label": step.label,
                    "text": step.text(),
                    "formula": step.formula,
                    "ok": step.ok,
                    "url": step_url(step),
                    "output": step.output,
                    # No link can carry the paste: this step's becomes a button posting the form.
                    "posts_paste": holds_paste(step.calculator_params, PASTED_IN_CHAIN),
                    "calculator": CALCULATORS[step.calculator].title,
                    "expected": step.expected.text if step.expected else "",
                }
                for step in walked.steps
            ],
            "query": chain_query(walked.params),
            "engine_url": engine_url(chain_to_engine(walked.params, _users(walked))),
            "command": chain_command(walked.params),
            "pasted": bool(walked.params["model_config"]),
        }
    template = "felab_sim/chain_body.html#results" if request.htmx else "felab_sim/chain_body.html"
    return render_to_string(template, context, request), walked is not None

"""The chain from physics to money on the web: ``/sim/chain/`` and ``/sim/chain.json``.

Thin adapters: felab_sim/engine/chain.py walks the chain; docs/chain.md says what each step assumes.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from serving.content_cache import kept

from .calc_views import single_values
from .engine import chain
from .engine.calculators import CALCULATORS
from .engine.params import ParamError, ParamValue
from .forms import ChainForm, field_text, repeated_parameter, worded
from .models import changed_query


def step_url(step: chain.Step) -> str:
    """The step's calculator page at the settings the chain gave it, scrolled to its output."""
    query = changed_query(CALCULATORS[step.calculator], step.calculator_params)
    page = reverse("calc_page", args=[step.calculator])
    return f"{page}{'?' + query if query else ''}#output-{step.output}"


def chain_query(values: dict[str, ParamValue]) -> str:
    """The address's query for these settings: only what differs from the defaults."""
    return urlencode(
        {name: field_text(value) for name, value in values.items() if value != chain.DEFAULTS[name]}
    )


@require_GET
def chain_json(request: HttpRequest) -> JsonResponse:
    """The chain as JSON (``manage.py chain --json``'s shape); bad input is a 400 naming the setting."""
    try:
        walked = chain.walk(single_values(request))
    except ParamError as error:
        return JsonResponse({"error": {"param": error.param, "message": error.message}}, status=400)
    return JsonResponse(walked.as_json(step_url))


@require_GET
def chain_page(request: HttpRequest) -> HttpResponse:
    """The chain, explorable: a GET form whose address holds the settings, redrawn in place by htmx.

    One address, one page for everyone: its content is rendered once and kept for the most recent
    addresses, as a calculator page's is."""
    body, walked = kept(
        request,
        ("chain-page", bool(request.htmx), request.get_full_path()),
        lambda: _body_and_outcome(request),
    )
    if request.htmx:
        # htmx swaps only successful responses, and the errors must replace the stale results.
        response = HttpResponse(body)
    else:
        response = render(request, "felab_sim/chain.html", {"body": body}, status=200 if walked else 400)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _body_and_outcome(request: HttpRequest) -> tuple[str, bool]:
    """The page's content (felab_sim/chain_body.html), or for htmx its results alone, and
    whether the chain was walked (False: the settings were refused)."""
    form = ChainForm({**ChainForm.defaults(), **request.GET.dict()}, repeated_parameter(request.GET))
    walked = None
    if form.is_valid():
        try:
            walked = chain.walk(form.cleaned_data["values"])
        except ParamError as error:
            form.add_error(error.param if error.param in form.fields else None, worded(form, error))
    context: dict[str, object] = {"form": form, "groups": form.field_groups(), "chain": walked}
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
                    "calculator": CALCULATORS[step.calculator].title,
                }
                for step in walked.steps
            ],
            "query": chain_query(walked.params),
        }
    template = "felab_sim/chain_body.html#results" if request.htmx else "felab_sim/chain_body.html"
    return render_to_string(template, context, request), walked is not None

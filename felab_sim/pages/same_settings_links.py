"""The serving pages' addresses: the chain's and the engine's query for their own settings, and
the links between step-time, the engine and the chain at the same settings (which settings:
felab_sim/engine/course/same_settings.py). A setting another page cannot take (out of its range) leaves
that link off rather than opening it at a refusal."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from django.urls import reverse

from ..engine.calculators import CALCULATORS
from ..engine.core.params import ParamError, ParamValue
from ..engine.course import chain_settings
from ..engine.course.same_settings import step_time_to_chain, step_time_to_engine
from ..engine.serving.engine_params import ENGINE_PARAMS, parse_engine_values
from ..models import changed_query
from .forms import field_text

PASTED_IN_CHAIN = {param.name for param in chain_settings.PARAMS if param.is_long_text}


def chain_query(values: Mapping[str, ParamValue]) -> str:
    """The chain page's query for these settings: only what differs from the defaults, and never
    a pasted config.json, which no address can hold (felab_sim/pages/pastes.py)."""
    return urlencode(
        {
            name: field_text(value)
            for name, value in values.items()
            if value != chain_settings.DEFAULTS[name] and name not in PASTED_IN_CHAIN
        }
    )


def engine_query(values: Mapping[str, ParamValue]) -> str:
    """The engine page's query for these settings: only what differs from the defaults, never a
    pasted config.json."""
    return urlencode(
        {
            param.name: field_text(values[param.name])
            for param in ENGINE_PARAMS
            if values[param.name] != param.default
        }
    )


def _with_query(page: str, query: str) -> str:
    return page + (f"?{query}" if query else "")


def step_time_url(settings: Mapping[str, ParamValue] | None) -> str | None:
    if settings is None:
        return None
    calculator = CALCULATORS["step-time"]
    try:
        values = calculator.validate(settings)
    except ParamError:
        return None
    return _with_query(reverse("calc_page", args=["step-time"]), changed_query(calculator, values))


def chain_url(settings: Mapping[str, ParamValue] | None) -> str | None:
    if settings is None:
        return None
    try:
        values = chain_settings.validate(settings)
    except ParamError:
        return None
    return _with_query(reverse("chain_page"), chain_query(values))


def engine_url(settings: Mapping[str, ParamValue] | None) -> str | None:
    if settings is None:
        return None
    try:
        values = parse_engine_values(settings)
    except ParamError:
        return None
    return _with_query(reverse("engine_page"), engine_query(values))


def other_pages(calculator: str, values: Mapping[str, ParamValue]) -> list[dict[str, str]]:
    """A calculator page's links to the engine and the chain at its settings (step-time's only)."""
    if calculator != "step-time" or values.get("model_config") or values.get("calibration"):
        return []
    links = [
        (
            "the engine",
            engine_url(step_time_to_engine(values)),
            "these sequences as requests in flight, their prompts prefilled between the decodes",
        ),
        (
            "the chain",
            chain_url(step_time_to_chain(values)),
            "does it fit, users a replica, replicas and dollars",
        ),
    ]
    return [{"title": title, "url": url, "what": what} for title, url, what in links if url]

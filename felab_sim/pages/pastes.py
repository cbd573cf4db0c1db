"""Pastes (a config.json, an engine's start-up log) travel in a POST body, not the address.

A page whose form holds a paste posts it, with Django's CSRF token: a page's address of over
about 4 KB is refused by servers (gunicorn answers 414), while a paste may hold 20,000
characters. The address keeps the short settings: htmx is told to push them, and a post without
JavaScript and without a paste is sent on to them (303), so its page's address is shareable as a
GET form's was. Pages kept for every visitor hold :data:`CSRF_MARK` where the token goes, filled
on each request.

No link carries a paste: a link holding one would repeat it in the response once per link, and be
refused as too long when followed. Where a link would need the paste (a calculator's presets, the
chain's steps), the page offers a button that posts its form, paste and all, instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.middleware.csrf import get_token
from django.utils.html import format_html

# Where a kept page's CSRF input goes. Random per process, so no content can forge it.
CSRF_MARK = f"csrf-input-{uuid.uuid4().hex}"
_TOKEN_FIELD = "csrfmiddlewaretoken"


def submitted(request: HttpRequest) -> QueryDict:
    """The settings a visitor sent: the POST body's (without the CSRF token), else the query string's."""
    if request.method != "POST":
        return request.GET
    data = request.POST.copy()
    data.pop(_TOKEN_FIELD, None)
    return data


def csrf_input(request: HttpRequest) -> str:
    return format_html('<input type="hidden" name="{}" value="{}">', _TOKEN_FIELD, get_token(request))


def fill_csrf_mark(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """The visitor's own CSRF input where a kept page holds the mark."""
    mark = CSRF_MARK.encode()
    if mark in response.content:
        response.content = response.content.replace(mark, csrf_input(request).encode())
    return response


# Longer than any setting a page's short fields take (a model name, a number, a choice).
SHORT_VALUE_CHARS = 200


def holds_paste(settings: Mapping[str, str], long: set[str]) -> bool:
    """Whether any of the long fields (``long``) holds text."""
    return any(str(settings.get(name) or "").strip() for name in long)


def short_address(
    request: HttpRequest,
    defaults: dict[str, str],
    long: set[str],
    sent: QueryDict | None = None,
    path: str = "",
) -> str:
    """The address (``path``, by default the request's) for the posted settings (``sent``, by
    default the request's): the short ones that differ from the defaults. Only the page's own
    fields, each at most SHORT_VALUE_CHARS long, so an address (and the header or redirect that
    carries it) never repeats whatever else a request sends."""
    short = {
        name: value
        for name, value in (submitted(request) if sent is None else sent).items()
        if name in defaults
        and name not in long
        and defaults[name] != value
        and len(value) <= SHORT_VALUE_CHARS
    }
    path = path or request.path
    return f"{path}?{urlencode(short)}" if short else path


def push_short_settings(
    response: HttpResponse,
    request: HttpRequest,
    defaults: dict[str, str],
    long: set[str],
    sent: QueryDict | None = None,
    path: str = "",
) -> None:
    """Tell htmx the address to show after a POST: the page with its short settings only."""
    response["HX-Push-Url"] = short_address(request, defaults, long, sent, path)


def to_short_settings(
    request: HttpRequest,
    defaults: dict[str, str],
    long: set[str],
    sent: QueryDict | None = None,
    path: str = "",
) -> HttpResponse | None:
    """A post without JavaScript that holds no paste: a 303 to its settings' address, which
    shows the same page; None for any other request (the caller answers it)."""
    if request.method != "POST" or request.htmx or holds_paste(request.POST if sent is None else sent, long):
        return None
    response = HttpResponseRedirect(short_address(request, defaults, long, sent, path))
    response.status_code = 303
    return response

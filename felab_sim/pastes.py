"""Pastes (a config.json, an engine's start-up log) travel in a POST body, not the address.

A page whose form holds a paste posts it, with Django's CSRF token: a page's address of over
about 4 KB is refused by servers (gunicorn answers 414), while a paste may hold 20,000
characters. The address keeps the short settings (htmx is told to push them); pages kept for
every visitor hold :data:`CSRF_MARK` where the token goes, filled on each request.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, QueryDict
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


def push_short_settings(response: HttpResponse, path: str, settings: dict[str, str], long: set[str]) -> None:
    """Tell htmx the address to show after a POST: the page with its short settings only."""
    short = {name: value for name, value in settings.items() if name not in long}
    response["HX-Push-Url"] = f"{path}?{urlencode(short)}" if short else path

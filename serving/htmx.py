"""django-htmx's ``request.htmx``, telling an htmx request from the WSGI environ itself.

django-htmx reads its headers through ``request.headers``, which Django builds from the whole
environ on first use: about fifty Python calls, and on a page's GET nothing else asks for it.
Card pages, calculators and /sim/ ask ``request.htmx`` on every request, so its truth (is this
htmx swapping part of a page?) reads the one ``HX-Request`` entry of ``request.META`` instead,
with django-htmx's rule for a value sent URI-encoded. Everything else is django-htmx's.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from django.http import HttpRequest, HttpResponse
from django_htmx.middleware import HtmxDetails as DjangoHtmxDetails


class HtmxDetails(DjangoHtmxDetails):
    def __bool__(self) -> bool:
        meta = self.request.META
        value = meta.get("HTTP_HX_REQUEST")
        if value and meta.get("HTTP_HX_REQUEST_URI_AUTOENCODED") == "true":
            value = unquote(value)
        return value == "true"


def htmx_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """django_htmx.middleware.HtmxMiddleware with these details (the site is served over WSGI)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        request.htmx = HtmxDetails(request)  # type: ignore[attr-defined]
        return get_response(request)

    return middleware

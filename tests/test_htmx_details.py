"""request.htmx as the site's middleware sets it (serving/htmx.py): django-htmx's answers, with
whether a request is htmx's read from the environ without building request.headers."""

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django_htmx.middleware import HtmxDetails as DjangoHtmxDetails

from serving.htmx import htmx_middleware


def through_middleware(**headers: str) -> HttpRequest:
    seen: list[HttpRequest] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return HttpResponse()

    htmx_middleware(view)(RequestFactory().get("/sim/", headers=headers))
    return seen[0]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"HX-Request": "true"},
        {"HX-Request": "false"},
        {"HX-Request": ""},
        {"HX-Request": "TRUE"},
        {"HX-Request": "%74rue", "HX-Request-URI-AutoEncoded": "true"},
        {"HX-Request": "%74rue"},
        {"HX-Request": "true", "HX-Request-URI-AutoEncoded": "true"},
    ],
)
def test_an_htmx_request_is_told_as_django_htmx_tells_it(headers):
    request = through_middleware(**headers)

    assert bool(request.htmx) is bool(DjangoHtmxDetails(request))


def test_telling_an_htmx_request_leaves_request_headers_unbuilt():
    request = through_middleware(**{"HX-Request": "true"})

    assert request.htmx
    assert "headers" not in request.__dict__  # django-htmx's own builds it: about fifty calls


def test_the_other_details_are_django_htmxs():
    request = through_middleware(**{"HX-Request": "true", "HX-Target": "results", "HX-Trigger": "go"})

    assert (request.htmx.target, request.htmx.trigger, request.htmx.boosted) == ("results", "go", False)

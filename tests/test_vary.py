"""serving.vary.vary_on writes the Vary header exactly as Django's patch_vary_headers does."""

import itertools

import pytest
from django.http import HttpResponse
from django.utils.cache import patch_vary_headers

from serving.vary import vary_on

EXISTING = [
    None,
    "",
    "Cookie",
    "cookie",
    "HX-Request",
    "Accept-Encoding, Cookie",
    "Cookie ,  HX-Request",
    "*",
    "Cookie, *",
    " Cookie",
]


@pytest.mark.parametrize(
    ("existing", "header"), list(itertools.product(EXISTING, ["Cookie", "HX-Request", "Accept-Language"]))
)
def test_vary_on_writes_what_patch_vary_headers_writes(existing, header):
    ours, djangos = HttpResponse(), HttpResponse()
    if existing is not None:
        ours.headers["Vary"] = djangos.headers["Vary"] = existing
    vary_on(ours, header)
    patch_vary_headers(djangos, [header])
    assert ours.headers.get("Vary") == djangos.headers.get("Vary")

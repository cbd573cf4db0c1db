"""``Vary`` for one more header name, as Django's ``patch_vary_headers`` writes it, in fewer calls.

Three of a signed-in page's steps each add a name to ``Vary`` (the view's HX-Request, the CSRF
cookie's renewal and Django's session middleware its Cookie), and each
``patch_vary_headers`` call is about twenty Python calls: splitting the header with a regular
expression, two comprehensions and a membership test through the headers' case-insensitive
mapping. The first name on a response has nothing to split or merge. A second one (the CSRF
renewal's Cookie after a view's HX-Request) is merged here as Django merges it, without the
headers' mapping lookups: handing it to ``patch_vary_headers`` instead cost the card pages and
/sim/ 8 calls more (1,511 -> 1,519 and 1,418 -> 1,426, bench/bench_signed_in.py).
"""

from __future__ import annotations

from django.http import HttpResponseBase
from django.utils.cache import cc_delim_re


def vary_on(response: HttpResponseBase, header: str) -> None:
    """What ``patch_vary_headers(response, [header])`` does, for one header name other than ``*``."""
    headers = response.headers
    existing = headers.get("Vary")
    if existing is None:
        headers["Vary"] = header
        return
    names = cc_delim_re.split(existing)
    if header.lower() in {name.lower() for name in names}:
        # Django writes the header back all the same, re-joined (and "*" alone if it holds one).
        headers["Vary"] = "*" if "*" in names else ", ".join(names)
        return
    headers["Vary"] = "*" if "*" in names else ", ".join([*names, header])

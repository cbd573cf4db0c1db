"""``{% fixed_url "name" %}``: ``{% url "name" %}`` for a URL without arguments, reversed once per
process and script prefix instead of on every render.

Django's ``{% url %}`` resolves its name through the URLconf each time; the parts of a page
rendered for each visitor (the header's Log out form, /progress/'s links) name a handful of such
addresses on every request, and none of them can change while the process runs. Use it where a template is rendered per request; a part kept per content version
(``content_fragment``) is rendered once anyway, and ``{% url %}`` is clearer there.
"""

from __future__ import annotations

from functools import lru_cache

from django import template
from django.urls import get_script_prefix, reverse

register = template.Library()


@lru_cache(maxsize=256)
def _reversed(name: str, script_prefix: str) -> str:
    return reverse(name)


@register.simple_tag
def fixed_url(name: str) -> str:
    # The prefix is part of the key: a site mounted under a path reverses to addresses under it.
    return _reversed(name, get_script_prefix())

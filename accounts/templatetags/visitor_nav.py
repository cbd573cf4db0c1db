"""``{% visitor_nav %}``: the header's links for the visitor of this request, in one tag.

Every page renders it for each request (a ``per_visitor`` part of base.html), so it is built in
Python rather than in template tags: the links that depend only on whether the visitor is signed
in and an instructor are kept per content version (site/nav_links.html, four variants); a
signed-in visitor's Log out form carries the page's CSRF token, as ``{% csrf_token %}`` writes it.
"""

from __future__ import annotations

from django import template
from django.template.defaulttags import CsrfTokenNode
from django.template.loader import get_template
from django.utils.safestring import SafeString

from accounts.instructors import is_instructor
from pagecache.templatetags.content_fragments import kept_part
from serving.templatetags.fixed_urls import fixed_url

register = template.Library()

_LOG_OUT_FORM = '<form method="post" action="{action}">{token}<button type="submit" class="link-button">Log out</button></form>'


def _nav_links(context: template.Context, instructor: bool, signed_in: bool) -> str:
    def build() -> str:
        return get_template("site/nav_links.html").render({"instructor": instructor, "signed_in": signed_in})

    return kept_part(context, ("nav-links", instructor, signed_in), build)


@register.simple_tag(takes_context=True)
def visitor_nav(context: template.Context) -> SafeString:
    user = context["user"]
    signed_in = user.is_authenticated
    links = _nav_links(context, is_instructor(user), signed_in)
    if signed_in:
        return SafeString(
            links + _LOG_OUT_FORM.format(action=fixed_url("logout"), token=CsrfTokenNode().render(context))
        )
    # Log in and Sign up come back to this page (not from the account pages, which carry their
    # own next): rendered per request, with the request's path.
    return SafeString(links + context.template.engine.get_template("site/account_links.html").render(context))

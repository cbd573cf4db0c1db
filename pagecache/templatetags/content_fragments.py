"""The two halves of keeping pages per content version (pagecache/content_cache.py).

``{% content_fragment "name" key … %}…{% endcontent_fragment %}``: a template part that is the
same for every learner, rendered once per content version in each process. The name and keys
must identify everything the part depends on besides course content; the part must not contain
a CSRF token, a learner's work or anything about the signed-in user.

``kept_part(context, key, build, token=None)``: the same for a tag written in Python (the nav's
links, /sim/'s run queue, kept while felab_sim.models.RUNS holds too).

``{% per_visitor %}…{% endper_visitor %}``: the opposite, a part that differs from one visitor
to the next. A page rendered by pagecache.kept_pages.render_kept is kept whole but for these parts,
which are rendered on each request; anywhere else they render in place. Never put one inside a
content_fragment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import template
from django.template.base import FilterExpression, NodeList, Parser, Token
from django.utils.safestring import SafeString

from pagecache.content_cache import SharedToken, kept
from pagecache.kept_pages import PerVisitorNode, building_kept_page

register = template.Library()
T = TypeVar("T")


def kept_part(
    context: template.Context, key: tuple[Any, ...], build: Callable[[], T], token: SharedToken | None = None
) -> T:
    """A Python tag's part kept as ``{% content_fragment %}`` keeps one (and, with ``token``,
    only while that token holds too). Built in place outside a request, where there is nothing
    to key the version on, and in a kept page's once-per-version pass, which keeps it anyway."""
    request = None if building_kept_page(context) else context.get("request")
    if request is None:
        return build()
    return kept(request, ("fragment", *key), build, token)


class ContentFragmentNode(template.Node):
    def __init__(self, nodelist: NodeList, name: str, keys: list[FilterExpression]) -> None:
        self.nodelist, self.name, self.keys = nodelist, name, keys

    def render(self, context: template.Context) -> SafeString:
        key = (self.name, *(expression.resolve(context) for expression in self.keys))
        return SafeString(kept_part(context, key, lambda: self.nodelist.render(context)))


@register.tag
def content_fragment(parser: Parser, token: Token) -> ContentFragmentNode:
    bits = token.split_contents()
    if len(bits) < 2 or len(bits[1]) < 2 or bits[1][0] not in "\"'" or bits[1][-1] != bits[1][0]:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a quoted name first, then the keys it varies on")
    nodelist = parser.parse(("endcontent_fragment",))
    parser.delete_first_token()
    return ContentFragmentNode(nodelist, bits[1][1:-1], [parser.compile_filter(bit) for bit in bits[2:]])


@register.tag
def per_visitor(parser: Parser, token: Token) -> PerVisitorNode:
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("per_visitor takes no arguments")
    nodelist = parser.parse(("endper_visitor",))
    parser.delete_first_token()
    return PerVisitorNode(nodelist)

"""``{% content_fragment "name" key … %}…{% endcontent_fragment %}``: a template part that is the
same for every learner, rendered once per content version in each process (config/content_cache.py).

The name and keys must identify everything the part depends on besides course content; the
part must not contain a CSRF token, a learner's work or anything about the signed-in user.
"""

from __future__ import annotations

from django import template
from django.template.base import FilterExpression, NodeList, Parser, Token
from django.utils.safestring import SafeString, mark_safe

from config.content_cache import kept

register = template.Library()


class ContentFragmentNode(template.Node):
    def __init__(self, nodelist: NodeList, name: str, keys: list[FilterExpression]) -> None:
        self.nodelist, self.name, self.keys = nodelist, name, keys

    def render(self, context: template.Context) -> SafeString:
        request = context.get("request")
        if request is None:  # rendered outside a request: nothing to key the version on
            return self.nodelist.render(context)
        key = ("fragment", self.name, *(expression.resolve(context) for expression in self.keys))
        return mark_safe(kept(request, key, lambda: self.nodelist.render(context)))


@register.tag
def content_fragment(parser: Parser, token: Token) -> ContentFragmentNode:
    bits = token.split_contents()
    if len(bits) < 2 or bits[1][0] not in "\"'" or bits[1][-1] != bits[1][0]:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a quoted name first, then the keys it varies on")
    nodelist = parser.parse(("endcontent_fragment",))
    parser.delete_first_token()
    return ContentFragmentNode(nodelist, bits[1][1:-1], [parser.compile_filter(bit) for bit in bits[2:]])

"""The two halves of keeping pages per content version (serving/content_cache.py).

``{% content_fragment "name" key … %}…{% endcontent_fragment %}``: a template part that is the
same for every learner, rendered once per content version in each process. The name and keys
must identify everything the part depends on besides course content; the part must not contain
a CSRF token, a learner's work or anything about the signed-in user. ``when=expression`` last
keeps it only where the expression is true (a lesson the learner has not touched looks the same
to everyone) and renders it afresh elsewhere. ``bounded`` last keeps only the most recently used
of its renders (serving.content_cache.kept_by_look): for keys made of how a learner's progress
looks (which cards are rated and due), of which there are as many as patterns of study.

``{% kept_each_by_look "name" items "template.html" "as" key … %}``: the template rendered for each
item (named ``as`` in it) and kept by the item's ``look`` and any further keys, as a ``bounded``
fragment is; the loop runs in Python, a few calls an item, where a template loop of fragments
costs about fifty (/progress/ has one per lesson on every request, home one per run of lessons).

``kept_part(context, key, build, token=None)``: the same for a tag written in Python (the nav's
links, /sim/'s run queue, kept while felab_sim.models.RUNS holds too).

``kept_with_holes(context, key, build, holes)``: a Python tag's part kept with holes where each
request's own values go (a username, an email address, the page's CSRF token): the part is
built once with a mark in each hole, and each request joins the kept text and its values.

``{{ items|looks }}``: the items' looks together, to key one ``bounded`` fragment by a whole loop.

``{% per_visitor %}…{% endper_visitor %}``: the opposite, a part that differs from one visitor
to the next. A page rendered by serving.kept_pages.render_kept is kept whole but for these parts,
which are rendered on each request; anywhere else they render in place. Never put one inside a
content_fragment.

Tags that run on every request return ``SafeString(text)`` rather than ``mark_safe(text)``: the
two are the same for a string, but mark_safe first checks for a lazy string, about ten Python
calls each time.
"""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from django import template
from django.template.base import FilterExpression, NodeList, Parser, Token
from django.utils.safestring import SafeString

from serving.content_cache import SharedToken, kept, kept_by_look, kept_while
from serving.kept_pages import PerVisitorNode, building_kept_page

register = template.Library()
T = TypeVar("T")


def keeping_request(context: template.Context) -> Any:
    """The request to keep a fragment for, or None where it is rendered in place: outside a
    request there is nothing to key the version on, and in a kept page's once-per-version pass
    the whole page is kept anyway."""
    return None if building_kept_page(context) else context.get("request")


def kept_part(
    context: template.Context, key: tuple[Any, ...], build: Callable[[], T], token: SharedToken | None = None
) -> T:
    """A Python tag's part kept as ``{% content_fragment %}`` keeps one (and, with ``token``,
    only while that token holds too: serving.content_cache.kept_while); built in place where
    nothing is kept (no request, or a kept page's once-per-version pass)."""
    if (request := keeping_request(context)) is None:
        return build()
    if token is None:
        return kept(request, ("fragment", *key), build)
    return kept_while(request, token, ("fragment", *key), build)


# A hole's mark in a part being built: random per process, so no content can forge one, and
# made of letters, digits and NULs, which escaping leaves as they are.
_HOLE_TAG = uuid.uuid4().hex
_HOLE = re.compile(f"\x00hole-(\\w+)-{_HOLE_TAG}\x00")


def _hole_mark(name: str) -> SafeString:
    return SafeString(f"\x00hole-{name}-{_HOLE_TAG}\x00")


@dataclass(frozen=True)
class _Holed:
    """A part's text around its holes: ``texts[i]``, then the value of ``holes[i]``, …, then the last text."""

    texts: tuple[str, ...]
    holes: tuple[str, ...]

    @classmethod
    def of(cls, rendered: str, names: Iterable[str]) -> _Holed:
        pieces = _HOLE.split(rendered)  # text, hole name, text, …, text
        texts, holes = tuple(pieces[0::2]), tuple(pieces[1::2])
        if unknown := set(holes) - set(names):  # a mark copied from elsewhere, or a typo
            raise ValueError(f"holes {sorted(unknown)} were not asked for")
        return cls(texts, holes)

    def filled(self, values: Mapping[str, str]) -> SafeString:
        pieces = [self.texts[0]]
        for hole, text in zip(self.holes, self.texts[1:], strict=True):
            pieces.append(values[hole])
            pieces.append(text)
        return SafeString("".join(pieces))  # not mark_safe, whose lazy-string check costs ten calls


def _escaped(value: Any) -> str:
    """conditional_escape(value) in one or two calls where Django's takes about fifteen: this
    runs for each hole of each request."""
    return value.__html__() if hasattr(value, "__html__") else html.escape(str(value))


def kept_with_holes(
    context: template.Context,
    key: tuple[Any, ...],
    build: Callable[[Mapping[str, SafeString]], str],
    holes: Mapping[str, Any],
) -> SafeString:
    """A Python tag's part kept as :func:`kept_part` keeps one, with this request's ``holes``
    put in: ``build(marks)`` renders the part with ``marks[name]`` where each hole's value goes
    (a hole may be used any number of times, or not at all). Values are escaped, unless marked
    safe (the page's CSRF input); ``key`` names everything else the part depends on."""
    holed = kept_part(
        context, key, lambda: _Holed.of(build({name: _hole_mark(name) for name in holes}), holes)
    )
    return holed.filled({name: _escaped(value) for name, value in holes.items()})


class ContentFragmentNode(template.Node):
    def __init__(
        self,
        nodelist: NodeList,
        name: str,
        keys: list[FilterExpression],
        when: FilterExpression | None,
        bounded: bool = False,
    ) -> None:
        self.nodelist, self.name, self.keys, self.when = nodelist, name, keys, when
        self.keep = kept_by_look if bounded else kept

    def _keeping_request(self, context: template.Context) -> Any:
        """The request to keep the part for, or None where it is rendered in place."""
        request = keeping_request(context)
        if request is None or (self.when is not None and not self.when.resolve(context)):
            return None
        return request

    def _key(self, kind: str, context: template.Context) -> tuple[Any, ...]:
        return (kind, self.name, *(expression.resolve(context) for expression in self.keys))

    def render(self, context: template.Context) -> SafeString:
        if (request := self._keeping_request(context)) is None:
            return self.nodelist.render(context)
        return SafeString(
            self.keep(request, self._key("fragment", context), lambda: self.nodelist.render(context))
        )

    def render_utf8(self, context: template.Context) -> bytes:
        """``render(context).encode()``, kept encoded: what a kept page's part holds
        (serving.kept_pages.KeptPage.fill), which would otherwise encode the same text again on
        every request. Kept apart from the text ``render`` keeps, and only where it is used."""
        if (request := self._keeping_request(context)) is None:
            return self.nodelist.render(context).encode()
        return self.keep(
            request, self._key("fragment-utf8", context), lambda: self.nodelist.render(context).encode()
        )


def _quoted(bit: str) -> str | None:
    return bit[1:-1] if len(bit) >= 2 and bit[0] in "\"'" and bit[-1] == bit[0] else None


@register.tag
def content_fragment(parser: Parser, token: Token) -> ContentFragmentNode:
    bits = token.split_contents()
    if len(bits) < 2 or _quoted(bits[1]) is None:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a quoted name first, then the keys it varies on")
    bounded = bits[-1] == "bounded"
    if bounded:
        bits.pop()
    when = None
    if bits[-1].startswith("when="):
        when = parser.compile_filter(bits.pop().removeprefix("when="))
    nodelist = parser.parse(("endcontent_fragment",))
    parser.delete_first_token()
    return ContentFragmentNode(
        nodelist, bits[1][1:-1], [parser.compile_filter(bit) for bit in bits[2:]], when, bounded
    )


@register.simple_tag(takes_context=True)
def kept_each_by_look(
    context: template.Context, name: str, items: Iterable[Any], template_name: str, as_name: str, *keys: Any
) -> SafeString:
    part = context.template.engine.get_template(template_name)
    request = keeping_request(context)

    def render(item: Any) -> str:
        with context.push({as_name: item}):
            return part.render(context)

    if request is None:
        return SafeString("".join(render(item) for item in items))
    return SafeString(
        "".join(
            kept_by_look(request, ("fragment", name, item.look, *keys), lambda item=item: render(item))
            for item in items
        )
    )


@register.filter
def looks(items: Iterable[Any]) -> tuple[Any, ...]:
    """The items' ``look`` in order: a ``bounded`` fragment's key for a loop kept whole."""
    return tuple(item.look for item in items)


@register.tag
def per_visitor(parser: Parser, token: Token) -> PerVisitorNode:
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("per_visitor takes no arguments")
    nodelist = parser.parse(("endper_visitor",))
    parser.delete_first_token()
    return PerVisitorNode(nodelist)

"""Whole pages kept per content version (pagecache/content_cache.py), with each visitor's own
parts filled in per request.

A template marks what differs from one visitor to the next with ``{% per_visitor %}`` (the
signed-in user's links, CSRF tokens, the learner's answer and rating buttons). The rest is
rendered once per content version and key, without a request: ``request``, ``user``, ``perms``,
``csrf_token`` and ``messages`` raise :class:`VisitorDataOutsidePart` there, so a template that
uses them outside a part fails loudly instead of keeping one visitor's page for everyone. A
page's own values that differ per request (a practice problem's draw), passed as
``per_request``, are refused outside the parts likewise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template import Context, Node, NodeList
from django.template.context import make_context
from django.template.loader import get_template

from .content_cache import kept

# Where the visitor's parts go in the kept page. Random per process, so no content can forge it.
_MARK = f"\x00per-visitor-{uuid.uuid4().hex}\x00"
# Set on the Context during the once-per-version pass; {% include %} copies it along.
_PARTS_ATTRIBUTE = "_felab_visitor_parts"
VISITOR_VARIABLES = ("request", "user", "perms", "csrf_token", "messages")


class VisitorDataOutsidePart(Exception):
    """A template read a visitor's data outside ``{% per_visitor %}`` in a kept page."""


class _VisitorData:
    """Stands for the visitor's data in the once-per-version pass: any use of it raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _refuse(self, *args: Any) -> Any:
        raise VisitorDataOutsidePart(
            f"'{self._name}' is used outside {{% per_visitor %}} in a page kept for every visitor"
        )

    __getattr__ = __getitem__ = __str__ = __bool__ = __iter__ = __len__ = __html__ = _refuse


@dataclass(frozen=True)
class _Part:
    nodelist: NodeList
    # The template's variables where the part stands (loop variables, {% with %} names): content only.
    variables: dict[str, Any]


def building_kept_page(context: Context) -> bool:
    """Whether this is the once-per-version pass of a kept page (no request to key anything on)."""
    return getattr(context, _PARTS_ATTRIBUTE, None) is not None


class PerVisitorNode(Node):
    def __init__(self, nodelist: NodeList) -> None:
        self.nodelist = nodelist

    def render(self, context: Context) -> str:
        parts: list[_Part] | None = getattr(context, _PARTS_ATTRIBUTE, None)
        if parts is None:  # an ordinary render: the part is just part of the page
            return self.nodelist.render(context)
        variables = {
            name: value for name, value in context.flatten().items() if not isinstance(value, _VisitorData)
        }
        parts.append(_Part(self.nodelist, variables))
        return _MARK


@dataclass(frozen=True)
class KeptPage:
    template: Any  # django.template.base.Template, or a partial's TemplateProxy
    segments: tuple[str, ...]  # the page around the parts: one more than there are parts
    parts: tuple[_Part, ...]

    @classmethod
    def build(
        cls, template_name: str, context: dict[str, Any], per_request: tuple[str, ...] = ()
    ) -> KeptPage:
        template = get_template(template_name).template
        visitor = {name: _VisitorData(name) for name in (*VISITOR_VARIABLES, *per_request)}
        skeleton = Context({**visitor, **context}, autoescape=template.engine.autoescape)
        parts: list[_Part] = []
        setattr(skeleton, _PARTS_ATTRIBUTE, parts)
        segments = template.render(skeleton).split(_MARK)
        if len(segments) != len(parts) + 1:  # a filter ate or repeated a mark
            raise ValueError(f"{template_name}: {len(parts)} per_visitor parts but {len(segments) - 1} marks")
        return cls(template, tuple(segments), tuple(parts))

    def fill(self, request: HttpRequest, per_request: dict[str, Any] | None = None) -> str:
        """The page for this request: each part rendered with the context processors' values and
        the page's own ``per_request`` ones."""
        context = make_context(per_request or {}, request, autoescape=self.template.engine.autoescape)
        html = [self.segments[0]]
        with context.render_context.push_state(self.template), context.bind_template(self.template):
            for part, segment in zip(self.parts, self.segments[1:], strict=True):
                with context.push(part.variables):
                    html.append(part.nodelist.render(context))
                html.append(segment)
        return "".join(html)


def render_kept(
    request: HttpRequest,
    template_name: str,
    context: Callable[[], dict[str, Any]],
    key: tuple[Hashable, ...],
    per_request: dict[str, Any] | None = None,
    *,
    status: int = 200,
) -> HttpResponse:
    """``render(request, template_name, context(), status=status)``, with all but the
    ``per_visitor`` parts kept.

    ``context()`` is called only when the page is built; it must hold course content only, and
    ``key`` name everything it depends on besides the content version (which card, whether
    drafts are shown, which query options). ``per_request`` values reach the parts only.
    """
    names = tuple(sorted(per_request or ()))
    page = kept(
        request,
        ("page", template_name, names, *key),
        lambda: KeptPage.build(template_name, context(), names),
    )
    return HttpResponse(page.fill(request, per_request), status=status)

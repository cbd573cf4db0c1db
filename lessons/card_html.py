"""A card's sections, and the glossary entries it lists, as a page shows them: the HTML that
lessons/markdown.py sanitized when the row was saved, with what it cites filled in on each
showing, each number in a span that says where it came from.

Live numbers ({{sim.…}}, {{calc.…}}) and facts from the course's tables ({{hw.…}},
{{model.…}}, {{price.…}}, {{measured.…}}) are escaped as they go in, so the result stays safe,
and go only between tags: a placeholder inside a tag (a link's target, a title) stays as written,
since a <span> there would break the tag. Saving such a text is refused (lessons/markdown.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from html import unescape as unescape_html

from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from felab_sim.engine.core.calculator import Result
from felab_sim.engine.course import citations, facts, live_numbers
from felab_sim.engine.sweep.metrics import SweepResult


def _live_span(name: str, value: str) -> str:
    return f'<span class="live-number" title="Computed live: sim.{escape(name)}">{escape(value)}</span>'


def _calc_span(citation: citations.Citation, value: str) -> str:
    return f'<span class="live-number" title="Computed live: {escape(citation)}">{escape(value)}</span>'


def _fact_span(name: str, value: str) -> str:
    return (
        f'<span class="live-number" title="From the course\'s tables: {escape(name)}">{escape(value)}</span>'
    )


# A tag of sanitized HTML. nh3 writes every attribute value in double quotes (a quote inside
# escaped) and escapes "<" and ">" in text, so a ">" outside quotes always ends a tag.
_TAG = re.compile(r'<(?:[^>"]|"[^"]*")*>')


def _between_tags(html: str, fill: Callable[[str], str]) -> str:
    """``html`` with ``fill`` applied to its text only: never inside a tag."""
    parts: list[str] = []
    end = 0
    for tag in _TAG.finditer(html):
        parts += [fill(html[end : tag.start()]), tag.group()]
        end = tag.end()
    parts.append(fill(html[end:]))
    return "".join(parts)


def with_live_numbers(
    html: str, sweep: SweepResult | None, calc_results: Mapping[str, Result | None]
) -> SafeString:
    """Saved, sanitized HTML with the sweep's numbers, the cited calculator outputs and the
    tables' facts filled in (what cannot be computed shows as a dash)."""

    def fill(text: str) -> str:
        filled = live_numbers.fill(text, sweep, _live_span)
        filled = citations.fill(filled, calc_results, _calc_span)
        return facts.fill(filled, _fact_span)

    return mark_safe(_between_tags(html, fill))


def with_facts(html: str) -> SafeString:
    """Saved, sanitized HTML with the tables' facts filled in: a glossary entry cites no live number."""
    return mark_safe(_between_tags(html, lambda text: facts.fill(text, _fact_span)))


def plain_text(html: str, chars: int) -> str:
    """The HTML's text with entities decoded, cut to ``chars`` (an ellipsis included): for a
    template to escape once, quotes included, as in a meta description."""
    return Truncator(unescape_html(strip_tags(html))).chars(chars)

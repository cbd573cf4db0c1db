"""A card's sections, and the glossary entries it lists, as a page shows them: the HTML that
lessons/markdown.py sanitized when the row was saved, with what it cites filled in on each
showing, each number in a span that says where it came from.

Live numbers ({{sim.…}}, {{calc.…}}) and facts from the course's tables ({{hw.…}},
{{model.…}}, {{price.…}}, {{measured.…}}) are escaped as they go in, so the result stays safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import unescape as unescape_html

from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from felab_sim.engine import citations, facts, live_numbers
from felab_sim.engine.calculator import Result
from felab_sim.engine.metrics import SweepResult


def _live_span(name: str, value: str) -> str:
    return f'<span class="live-number" title="Computed live: sim.{escape(name)}">{escape(value)}</span>'


def _calc_span(citation: citations.Citation, value: str) -> str:
    return f'<span class="live-number" title="Computed live: {escape(citation)}">{escape(value)}</span>'


def _fact_span(name: str, value: str) -> str:
    return (
        f'<span class="live-number" title="From the course\'s tables: {escape(name)}">{escape(value)}</span>'
    )


def with_live_numbers(
    html: str, sweep: SweepResult | None, calc_results: Mapping[str, Result | None]
) -> SafeString:
    """Saved, sanitized HTML with the sweep's numbers, the cited calculator outputs and the
    tables' facts filled in (what cannot be computed shows as a dash)."""
    filled = live_numbers.fill(html, sweep, _live_span)
    filled = citations.fill(filled, calc_results, _calc_span)
    return mark_safe(facts.fill(filled, _fact_span))


def with_facts(html: str) -> SafeString:
    """Saved, sanitized HTML with the tables' facts filled in: a glossary entry cites no live number."""
    return mark_safe(facts.fill(html, _fact_span))


def plain_text(html: str, chars: int) -> str:
    """The HTML's text with entities decoded, cut to ``chars`` (an ellipsis included): for a
    template to escape once, quotes included, as in a meta description."""
    return Truncator(unescape_html(strip_tags(html))).chars(chars)

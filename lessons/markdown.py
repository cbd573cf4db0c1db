"""Lesson text is Markdown written by instructors: render it once, then sanitize it.

nh3 keeps only the tags and attributes a lesson needs, so a `<script>`, an event
handler or a `javascript:` link in card text never reaches a page.
"""

import markdown as markdown_lib
import nh3

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "dl", "dt", "dd", "a", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "sub", "sup", "abbr", "span",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "th": {"align"}, "td": {"align"}}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text: str) -> str:
    """Markdown to safe HTML. Empty text gives an empty string."""
    if not text.strip():
        return ""
    html = markdown_lib.markdown(text, extensions=["tables", "sane_lists"], output_format="html")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=ALLOWED_URL_SCHEMES,
        link_rel="noopener noreferrer",
    )

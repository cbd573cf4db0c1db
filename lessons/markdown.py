"""Lesson text is Markdown written by instructors: render it once, then sanitize it.

nh3 keeps only the tags and attributes a lesson needs, so a `<script>`, an event
handler or a `javascript:` link in card text never reaches a page.
"""

import re
from functools import lru_cache
from html.parser import HTMLParser
from urllib.parse import unquote

import markdown as markdown_lib
import nh3

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "dl", "dt", "dd", "a", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "sub", "sup", "abbr", "span",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "th": {"align"}, "td": {"align"}}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


def normalise_line_ends(text: str) -> str:
    r"""Line breaks as the content files write them: \n, with no spaces or tabs before one.

    A browser sends a text area's line breaks as \r\n (the HTML standard says so), whatever
    the instructor typed: left as they come, every text area of a saved form would differ from
    its file. And YAML cannot write a \r, or a space before a line break, in the block style
    the files use: export would turn the whole text into one quoted line. (Markdown's two-space
    line break goes with it: invisible in a text area, and rarely meant.)
    """
    return _SPACE_BEFORE_BREAK.sub("\n", text.replace("\r\n", "\n").replace("\r", "\n"))


_SPACE_BEFORE_BREAK = re.compile(r"[ \t]+\n")


# A pure function of the text: an import of the whole course renders each text once per
# process, and again only where a text changed (the bundled course has about 1,400).
@lru_cache(maxsize=8192)
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


def as_written_and_shown(text: str) -> list[str]:
    """The text as written and as the page shows it, for checking its live numbers.

    Pages fill live numbers into the rendered HTML, and Markdown's backslash escapes make a
    placeholder there that the text as written hides (``{\\{sim.x}}`` shows as ``{{sim.x}}``).
    """
    return [text, render_markdown(text)]


# Any live number, whichever simulator part computes it: {{sim.c8.agg_tok_s}}, {{calc.SET.KEY}}.
LIVE_NUMBER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


class _AttributeValues(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.values.extend(value for _, value in attrs if value)


def live_numbers_in_markup(text: str) -> list[str]:
    """Live numbers that Markdown text puts in a link target or an HTML attribute.

    Live numbers are filled in as a <span>, which inside an attribute would break the tag, so
    they belong in the text only. Link targets may arrive percent-encoded.
    """
    parser = _AttributeValues()
    parser.feed(render_markdown(text))
    parser.close()
    found = [name for value in parser.values for name in LIVE_NUMBER.findall(unquote(value))]
    return list(dict.fromkeys(found))


def live_number_markup_problems(text: str) -> list[str]:
    """Why a card's or a glossary entry's text cannot be saved: a live number or a fact inside
    a link target or an attribute, which a page would show as written, not filled in."""
    return [
        f"{{{{{name}}}}} is inside a link target or an HTML attribute, where a live number "
        "would break the page: put it in the text instead"
        for name in live_numbers_in_markup(text)
    ]

"""Read a page the way the seed was written: the text a browser shows, in order."""

import re
from html.parser import HTMLParser
from pathlib import Path

SEED_PATH = Path(__file__).resolve().parent / "data" / "lesson03-step1-concurrency-sweep.txt"

# Django masks the CSRF token anew in each response: in the forms, and in htmx's hx-vals.
_CSRF_TOKEN = re.compile(r'(name="csrfmiddlewaretoken" value="|"csrfmiddlewaretoken": ")[^"]+"')


def without_csrf_tokens(html: str) -> str:
    """The page with every CSRF token replaced by "…", so two renders of it compare equal."""
    return _CSRF_TOKEN.sub(r'\1…"', html)


def page_without_csrf_tokens(client, url: str) -> str:
    """The page at ``url`` (it must answer 200), its CSRF tokens replaced as above."""
    response = client.get(url)
    assert response.status_code == 200
    return without_csrf_tokens(response.content.decode())


class _TextOf(HTMLParser):
    """Collects the text inside the first element with the given class."""

    VOID = {"br", "img", "input", "meta", "link", "hr", "source", "wbr"}

    def __init__(self, css_class: str, skip_classes: frozenset[str]) -> None:
        super().__init__()
        self.css_class = css_class
        self.skip_classes = skip_classes
        self.depth = 0
        self.parts: list[str] = []
        self.skip_from: int | None = None  # depth of the element whose text is left out

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        if self.depth:
            self.depth += 1
        elif self.css_class in classes:
            self.depth = 1
        skipped = tag in {"script", "style", "template"} or classes & self.skip_classes
        if self.depth and self.skip_from is None and skipped:
            self.skip_from = self.depth

    def handle_endtag(self, tag):
        if tag in self.VOID or not self.depth:
            return
        if self.skip_from == self.depth:
            self.skip_from = None
        self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.skip_from is None:
            self.parts.append(data)


# What the app adds to a card beyond its stored text: the simulator's live panel, and the
# notes that explain the card's parts to a student (e.g. what "the kit" is).
ADDED_BY_THE_APP = frozenset({"layer-live", "app-note"})


def text_of(html: str, css_class: str, skip_classes: frozenset[str] = ADDED_BY_THE_APP) -> str:
    """The text inside the first element with css_class, minus elements with skip_classes."""
    parser = _TextOf(css_class, skip_classes)
    parser.feed(html)
    return "".join(parser.parts)


def squash(text: str) -> str:
    """All whitespace removed: compares words and their order, not the layout."""
    return re.sub(r"\s+", "", text)


def seed_squashed() -> str:
    """The seed card's text without the toggle's two labels and the list dashes."""
    lines = SEED_PATH.read_text(encoding="utf-8").splitlines()
    kept = [line.removeprefix("- ") for line in lines if line != "Show answerHide answer"]
    return squash("".join(kept))

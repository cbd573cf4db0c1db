"""Read a page the way the seed was written: the text a browser shows, in order."""

import re
from html.parser import HTMLParser
from pathlib import Path

SEED_PATH = Path(__file__).resolve().parent / "data" / "lesson03-step1-concurrency-sweep.txt"


class _TextOf(HTMLParser):
    """Collects the text inside the first element with the given class."""

    VOID = {"br", "img", "input", "meta", "link", "hr", "source", "wbr"}

    def __init__(self, css_class: str) -> None:
        super().__init__()
        self.css_class = css_class
        self.depth = 0
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        if self.depth:
            self.depth += 1
        elif self.css_class in (dict(attrs).get("class") or "").split():
            self.depth = 1
        if self.depth and tag in {"script", "style", "template"}:
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in self.VOID or not self.depth:
            return
        if tag in {"script", "style", "template"} and self.skip:
            self.skip -= 1
        self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.parts.append(data)


def text_of(html: str, css_class: str) -> str:
    parser = _TextOf(css_class)
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

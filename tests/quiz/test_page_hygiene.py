"""Pages ready for a strict Content-Security-Policy: no inline scripts, handlers or styles."""

import re
from html.parser import HTMLParser

import pytest
from django.test import Client

from quiz.models import Rating
from tests.conftest import SEED_CARD_URL
from tests.quiz.conftest import rate, show

pytestmark = pytest.mark.django_db


class _Inline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for name in attributes:
            if name == "style" or name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
        if tag == "style":
            self.problems.append("<style>")
        if tag == "script":
            self.in_script = "src" not in attributes
            if self.in_script and attributes.get("type") != "application/json":
                self.problems.append("inline <script>")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False


def inline_problems(body: str) -> list[str]:
    parser = _Inline()
    parser.feed(body)
    return parser.problems


@pytest.mark.parametrize(
    "url",
    [
        "/",
        SEED_CARD_URL,
        SEED_CARD_URL + "?answer=shown",
        SEED_CARD_URL + "?answer=shown&review=1",
        "/progress/",
        "/review/",
        "/instructor/",
        "/accounts/login/",
        "/accounts/signup/",
    ],
)
def test_no_inline_script_handler_or_style(instructor_client, student_client, seed_card, url):
    show(student_client, "typed")
    rate(student_client, Rating.GOT_IT)
    client = instructor_client if url == "/instructor/" else student_client
    if url.startswith("/accounts/"):
        client = Client()
    body = client.get(url).content.decode()
    assert inline_problems(body) == []


def test_the_checker_catches_what_it_looks_for():
    assert inline_problems('<p style="x">a</p><button onclick="y()">b</button><script>z()</script>') == [
        "<p style=...>",
        "<button onclick=...>",
        "inline <script>",
    ]
    assert (
        inline_problems('<script type="application/json" id="d">{}</script><script src="a.js"></script>')
        == []
    )


def test_card_page_loads_the_keyboard_script_and_lists_the_keys(client, seed_card):
    body = client.get(SEED_CARD_URL).content.decode()
    assert '<script src="/static/js/card-keys.js" defer></script>' in body
    hints = re.search(r'<aside class="key-hints".*?</aside>', body, re.S)[0]
    for key in ("Space", "Enter", "1", "4", "Esc"):
        assert f"<kbd>{key}</kbd>" in hints
    assert "while you type in the answer box" in hints

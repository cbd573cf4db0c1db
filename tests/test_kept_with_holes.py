"""A Python tag's part kept with holes for each request's own values
(serving.templatetags.content_fragments.kept_with_holes)."""

import pytest
from django.template import Context
from django.test import RequestFactory
from django.utils.safestring import SafeString

from serving.content_cache import content_changed
from serving.templatetags.content_fragments import kept_with_holes

pytestmark = pytest.mark.django_db


class Builds:
    def __init__(self, template: str) -> None:
        self.template, self.count = template, 0

    def __call__(self, marks) -> str:
        self.count += 1
        return self.template.format(**marks)


def part(build: Builds, with_request: bool = True, **holes) -> str:
    context = Context({"request": RequestFactory().get("/progress/")} if with_request else {})
    return kept_with_holes(context, ("test-part", build.template), build, holes)


def test_each_request_gets_its_own_values_in_text_built_once():
    build = Builds("<p>Hello <b>{name}</b>, you wrote to {address}.</p>")

    first = part(build, name="sam", address="sam@example.com")
    second = part(build, name="alex", address="alex@example.com")

    assert first == "<p>Hello <b>sam</b>, you wrote to sam@example.com.</p>"
    assert second == "<p>Hello <b>alex</b>, you wrote to alex@example.com.</p>"
    assert build.count == 1
    assert isinstance(second, SafeString)


def test_values_are_escaped_but_those_marked_safe():
    build = Builds('<a title="{name}">{name}</a>{token}')

    html = part(build, name="<script>\"&'", token=SafeString('<input type="hidden">'))

    escaped = "&lt;script&gt;&quot;&amp;&#x27;"
    assert html == f'<a title="{escaped}">{escaped}</a><input type="hidden">'


def test_a_hole_the_part_leaves_out_is_harmless():
    build = Builds("<p>No email address yet.</p>")

    assert part(build, email="sam@example.com") == "<p>No email address yet.</p>"


def test_a_content_change_builds_the_part_again():
    build = Builds("<p>{name}</p>")
    part(build, name="sam")

    content_changed()

    assert part(build, name="alex") == "<p>alex</p>"
    assert build.count == 2


def test_without_a_request_the_part_is_built_in_place():
    build = Builds("<p>{name}</p>")

    parts = [part(build, with_request=False, name=name) for name in ("sam", "alex")]
    assert parts == ["<p>sam</p>", "<p>alex</p>"]
    assert build.count == 2

"""A content fragment in a kept page's per-visitor part is kept as UTF-8 (issue 23): the page's
bytes are those of an ordinary render, the fragment is encoded once per content version, and a
content change encodes it again."""

import pytest
from django.template import Context, Template
from django.template.loader import get_template
from django.test import RequestFactory

from serving.content_cache import content_changed
from serving.kept_pages import PerVisitorNode
from serving.templatetags.content_fragments import ContentFragmentNode

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _new_content_version():
    content_changed()  # nothing kept by another test's version


SOURCE = (
    "{% load content_fragments %}"
    '{% content_fragment "utf8-test" key %}<p>{{ text }} · 36 GB — {{ key }}</p>{% endcontent_fragment %}'
)


def fragment_node() -> ContentFragmentNode:
    (node,) = [node for node in Template(SOURCE).nodelist if isinstance(node, ContentFragmentNode)]
    return node


def context(text: str, key: int = 1) -> Context:
    return Context({"request": RequestFactory().get("/progress/"), "text": text, "key": key})


def test_the_kept_bytes_are_the_rendered_text_encoded_once():
    node = fragment_node()

    first = node.render_utf8(context("Grüße"))
    second = node.render_utf8(context("not rendered again: the fragment is kept"))

    assert first == "<p>Grüße · 36 GB — 1</p>".encode()
    assert second is first  # the kept bytes themselves, not encoded again
    assert node.render_utf8(context("another key", key=2)) == "<p>another key · 36 GB — 2</p>".encode()


def test_a_content_change_encodes_the_fragment_again():
    node = fragment_node()
    node.render_utf8(context("before"))

    content_changed()

    assert node.render_utf8(context("after")) == "<p>after · 36 GB — 1</p>".encode()


def test_without_a_request_it_is_rendered_in_place_each_time():
    node = fragment_node()

    for text in ("one", "two"):
        assert node.render_utf8(Context({"text": text, "key": 1})) == f"<p>{text} · 36 GB — 1</p>".encode()


def test_the_text_and_the_bytes_are_kept_apart():
    node = fragment_node()

    assert node.render(context("text first")) == "<p>text first · 36 GB — 1</p>"
    assert node.render_utf8(context("bytes apart")) == "<p>bytes apart · 36 GB — 1</p>".encode()


@pytest.mark.parametrize(
    ("template_name", "fragments"), [("lessons/home.html", 1), ("quiz/progress.html", 3)]
)
def test_the_learners_maps_and_progress_are_kept_fragments_at_the_top_of_their_part(template_name, fragments):
    """Home's and /progress/'s 30 to 46 kB of learner's part are kept encoded only while their
    fragments stand at the top of the per-visitor part (inside a loop or an if, they are text)."""
    template = get_template(template_name).template
    parts = template.nodelist.get_nodes_by_type(PerVisitorNode)
    top_level = [node for part in parts for node in part.nodelist if isinstance(node, ContentFragmentNode)]

    assert len(top_level) == fragments

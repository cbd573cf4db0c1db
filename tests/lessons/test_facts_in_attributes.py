"""A fact ({{hw.…}}, {{model.…}}) or a live number inside a link target or another attribute: a
page fills it in as a <span>, which inside a tag would break it. Saving such a text is refused
with a message, in the admin and by import, for cards and glossary entries alike; and a text
saved before that check is shown with its tags whole (a placeholder inside one stays as written)."""

from __future__ import annotations

import io
import shutil
from html.parser import HTMLParser

import pytest
from django.core.management import CommandError, call_command

from lessons.content_format import CONTENT_DIR
from lessons.models import GlossaryTerm
from tests.conftest import SEED_CARD_URL
from tests.lessons.test_admin import card_form_data, change_url

pytestmark = pytest.mark.django_db

BANDWIDTH = "{{hw.h100-sxm.bandwidth_gbs}}"
IN_ATTRIBUTES = [
    f"See [the H100]({BANDWIDTH}).",
    f"See [the H100](https://www.nvidia.com/?gbs={BANDWIDTH}).",
    f'See [the H100](https://www.nvidia.com/ "{BANDWIDTH} GB/s").',
    '<abbr title="{{ model.Llama-3.1-8B.layers }} layers">Llama</abbr> is deep.',
]


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


@pytest.mark.parametrize("text", IN_ATTRIBUTES)
def test_an_instructor_saving_a_card_with_a_fact_in_an_attribute_is_told_why(
    instructor_client, seed_card, text
):
    before = seed_card.plain_words
    response = instructor_client.post(change_url(seed_card), card_form_data(seed_card, plain_words=text))
    body = response.content.decode()
    assert response.status_code == 200 and '<ul class="errorlist' in body
    assert "is inside a link target or an HTML attribute" in body
    seed_card.refresh_from_db()
    assert seed_card.plain_words == before


@pytest.mark.parametrize("text", IN_ATTRIBUTES)
def test_an_instructor_saving_a_glossary_entry_with_a_fact_in_an_attribute_is_told_why(
    instructor_client, lessons, text
):
    term = GlossaryTerm.objects.get(term="Memory bandwidth")
    before = term.example
    data = {"term": term.term, "definition": term.definition, "example": text}
    response = instructor_client.post(f"/admin/lessons/glossaryterm/{term.pk}/change/", data)
    body = response.content.decode()
    assert response.status_code == 200 and '<ul class="errorlist' in body
    assert "is inside a link target or an HTML attribute" in body
    term.refresh_from_db()
    assert term.example == before


def test_a_fact_in_the_text_of_a_glossary_entry_is_still_saved(instructor_client, lessons):
    term = GlossaryTerm.objects.get(term="Memory bandwidth")
    text = f"[The H100](https://www.nvidia.com/) reads {BANDWIDTH} GB/s."
    data = {"term": term.term, "definition": term.definition, "example": text}
    response = instructor_client.post(f"/admin/lessons/glossaryterm/{term.pk}/change/", data)
    assert response.status_code == 302
    term.refresh_from_db()
    assert term.example == text


def test_import_refuses_a_glossary_entry_with_a_fact_in_a_link_target(tmp_path):
    shutil.copytree(CONTENT_DIR, tmp_path / "content")
    path = tmp_path / "content" / "glossary.yaml"
    old = "{{hw.m4-max-32c.bandwidth_gbs}}"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, f"[{old}](https://example.org/{old})", 1), encoding="utf-8")
    with pytest.raises(
        CommandError, match=r"term [^:]+: \{\{hw.m4-max-32c.bandwidth_gbs\}\} is inside a link target"
    ):
        call_command("import_lessons", "--dir", str(tmp_path / "content"), stdout=io.StringIO())


def assert_tags_whole(page: str) -> None:
    for tag, attrs in tags_of(page):
        for name, value in attrs.items():
            assert "<" not in (value or "") and ">" not in (value or ""), (tag, name, value)


def test_a_card_saved_before_the_check_shows_its_tags_whole(client, seed_card):
    # Written as an import of old content would have: save() renders the text, clean() never ran.
    seed_card.plain_words = (
        f'See [the H100](https://www.nvidia.com/?gbs={BANDWIDTH} "{BANDWIDTH}"): {BANDWIDTH} GB/s.'
    )
    seed_card.save()
    page = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    assert_tags_whole(page)
    link = next(attrs for tag, attrs in tags_of(page) if tag == "a" and "nvidia" in (attrs.get("href") or ""))
    assert link["href"] == f"https://www.nvidia.com/?gbs={BANDWIDTH}" and link["title"] == BANDWIDTH
    # In the text the fact is filled in as ever.
    assert ">3,350</span> GB/s." in page


def test_a_glossary_entry_saved_before_the_check_shows_its_tags_whole(client, lessons):
    term = GlossaryTerm.objects.get(term="Memory bandwidth")
    term.example = f'<abbr title="{BANDWIDTH} GB/s">HBM</abbr> reads {BANDWIDTH} GB/s.'
    term.save()
    page = client.get("/glossary/").content.decode()
    assert_tags_whole(page)
    assert f'<abbr title="{BANDWIDTH} GB/s">HBM</abbr> reads <span class="live-number"' in page

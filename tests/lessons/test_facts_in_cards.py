"""A card or glossary entry cites a table's fact: the page prints it, and import refuses a bad name."""

import io
import shutil

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from lessons.content_format import CONTENT_DIR
from lessons.models import GlossaryTerm

pytestmark = pytest.mark.django_db
LESSON_00 = "/learn/llm-inference-performance/setup-and-guardrails/step-1/"


def test_a_card_prints_the_hardware_table_s_bandwidth(client, lessons):
    body = client.get(LESSON_00, {"answer": "shown"}).content.decode()
    assert 'title="From the course\'s tables: hw.m4-max-32c.bandwidth_gbs">410</span>' in body
    assert "{{hw." not in body


def test_the_glossary_prints_facts_too(client, lessons):
    term = GlossaryTerm.objects.get(term="Memory bandwidth")
    assert "{{hw.m4-max-32c.bandwidth_gbs}}" in term.example
    body = client.get("/glossary/").content.decode()
    assert "{{hw." not in body and ">410</span> GB/s on the course" in body


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        (
            "llm-inference-performance/lesson-00-setup-and-guardrails.yaml",
            "{{hw.m4-max-32c.bandwidth_gbs}}",
            "{{hw.m4-max-99c.bandwidth_gbs}}",
        ),
        ("glossary.yaml", "{{hw.m4-max-32c.bandwidth_gbs}}", "{{hw.m4-max-32c.bandwidth}}"),
    ],
)
def test_import_refuses_a_fact_no_table_holds(tmp_path, file, old, new):
    shutil.copytree(CONTENT_DIR, tmp_path / "content")
    path = tmp_path / "content" / file
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    with pytest.raises(CommandError, match=r"m4-max-(99c|32c\.bandwidth)"):
        call_command("import_lessons", "--dir", str(tmp_path / "content"), stdout=io.StringIO())


def test_a_glossary_entry_naming_no_table_fact_is_refused_on_save(lessons):
    term = GlossaryTerm.objects.get(term="Memory bandwidth")
    term.example = "{{hw.m4-max-32c.bandwidth}} GB/s"
    with pytest.raises(ValidationError, match="'bandwidth' is not a field"):
        term.full_clean()

"""Mistakes named from the class's answers travel with their template in the content files:
`export_lessons` writes them under the template's `class_mistakes:`, `import_lessons` reads them
back through the admin's checks (quiz.class_mistakes.write_entry, lessons/content_import.py)."""

import json

import pytest
import yaml
from django.core.management import CommandError

from lessons.models import PracticeTemplate
from quiz.models import ClassMistake
from tests.lessons.test_practice_templates import PRACTICE_FILE, run, write_course

pytestmark = pytest.mark.django_db

TEMPLATE = "kv-draft"  # kv_gb_total for 1, 4 or 16 users
DOUBLED = {
    "slug": "both-k-and-v-twice",
    "says": "Your answer counts K and V twice each.",
    "formula": "answer * 2",
}
PER_USER = {
    "slug": "one-user",
    "says": "That is one user's cache; there are {users}.",
    "formula": "answer / users",
}


def rows() -> list[tuple[str, str, str, str]]:
    """Every class mistake as (template, slug, says, formula), oldest first."""
    found = ClassMistake.objects.order_by("created_at", "id").select_related("template")
    return [(row.template.slug, row.slug, row.says, row.formula) for row in found]


def named_in_the_admin(instructor_client, *entries: dict[str, str]) -> None:
    template = PracticeTemplate.objects.get(slug=TEMPLATE)
    for entry in entries:
        response = instructor_client.post("/admin/quiz/classmistake/add/", {"template": template.pk, **entry})
        assert response.status_code == 302, response.content.decode()[:2000]


def with_class_mistakes(*entries: dict[str, str]) -> str:
    """PRACTICE_FILE with these class mistakes under its last template, kv-draft."""
    lines = ["  class_mistakes:"]
    for entry in entries:
        for index, (key, value) in enumerate(entry.items()):
            lines.append(f"  {'  ' if index else '- '}{key}: {json.dumps(value)}")
    return PRACTICE_FILE + "\n".join(lines) + "\n"


def test_class_mistakes_are_exported_with_their_template_and_imported_back_the_same(
    tmp_path, instructor_client
):
    (tmp_path / "in").mkdir()
    write_course(tmp_path / "in", PRACTICE_FILE)
    run("import_lessons", "--dir", str(tmp_path / "in"))
    named_in_the_admin(instructor_client, PER_USER, DOUBLED)
    named = rows()
    assert [slug for _, slug, _, _ in named] == ["one-user", "both-k-and-v-twice"]

    run("export_lessons", "--dir", str(tmp_path / "out"))
    exported = tmp_path / "out" / "c" / "practice-05-kv-cache.yaml"
    templates = {t["slug"]: t for t in yaml.safe_load(exported.read_text())["templates"]}
    assert templates[TEMPLATE]["class_mistakes"] == [PER_USER, DOUBLED]
    assert "class_mistakes" not in templates["kv-doubling"]
    # Beside its template's own keys, the rest of the file as it was.
    assert exported.read_text().startswith(PRACTICE_FILE)

    ClassMistake.objects.all().delete()
    report = run("import_lessons", "--dir", str(tmp_path / "out"))
    assert "2 created" in report
    assert rows() == named
    again = run("import_lessons", "--dir", str(tmp_path / "out"))
    assert "0 created, 0 updated" in again and rows() == named
    # And the file export writes from them is the same.
    run("export_lessons", "--dir", str(tmp_path / "again"))
    assert (tmp_path / "again" / "c" / "practice-05-kv-cache.yaml").read_text() == exported.read_text()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"formula": "answer.__class__"}, "formula: No attributes"),
        ({"formula": "__import__('os')"}, "formula: No function calls"),
        ({"formula": "answer * tokens"}, "formula: 'tokens' is not a number this template"),
        ({"formula": "answer * 1"}, "so no student would ever read it"),
        ({"says": "Twice {nothing}."}, "says: {nothing} names no input or output"),
        ({"slug": "Twice"}, "slug:"),
    ],
)
def test_the_import_refuses_a_class_mistake_the_admin_would_refuse_naming_file_template_and_mistake(
    tmp_path, change, words
):
    bad = {**DOUBLED, **change}
    write_course(tmp_path, with_class_mistakes(PER_USER, bad))
    with pytest.raises(CommandError) as raised:
        run("import_lessons", "--dir", str(tmp_path))
    message = str(raised.value)
    assert f"practice-05-kv-cache.yaml: template {TEMPLATE}: class mistake {bad['slug']}: " in message
    assert words in message
    assert not ClassMistake.objects.exists() and not PracticeTemplate.objects.exists()


def test_a_class_mistake_is_checked_against_those_named_before_it_in_the_file(tmp_path):
    # The second is the first again under another slug: offered on no draw once the first is.
    again = {**DOUBLED, "slug": "doubled-again"}
    write_course(tmp_path, with_class_mistakes(DOUBLED, again))
    with pytest.raises(
        CommandError, match=r"class mistake doubled-again: .*so no student would ever read it"
    ):
        run("import_lessons", "--dir", str(tmp_path))


def test_an_admin_edit_of_a_class_mistake_is_kept_and_reported_as_a_conflict(tmp_path):
    write_course(tmp_path, with_class_mistakes(DOUBLED))
    run("import_lessons", "--dir", str(tmp_path))
    ClassMistake.objects.filter(slug=DOUBLED["slug"]).update(says="Edited in the admin: K and V twice.")
    report = run("import_lessons", "--dir", str(tmp_path))
    assert f"class mistake {TEMPLATE}/{DOUBLED['slug']}" in report and "says" in report
    assert ClassMistake.objects.get().says == "Edited in the admin: K and V twice."
    run("import_lessons", "--dir", str(tmp_path), "--force")
    assert ClassMistake.objects.get().says == DOUBLED["says"]


def test_a_class_mistake_that_is_not_a_slug_says_and_formula_is_refused(tmp_path):
    write_course(tmp_path, with_class_mistakes({"slug": "doubled", "says": "Twice."}))
    with pytest.raises(
        CommandError, match=f"template {TEMPLATE}: each of 'class_mistakes' has a slug, says and formula"
    ):
        run("import_lessons", "--dir", str(tmp_path))

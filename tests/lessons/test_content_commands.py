import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from lessons.content_files import CONTENT_DIR
from lessons.models import Card, CardTerm, Course, GlossaryTerm, Lesson

SEED = Path(__file__).resolve().parent.parent / "data" / "lesson03-step1-concurrency-sweep.txt"


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def snapshot() -> list:
    cards = [
        (
            c.natural_key(),
            c.title,
            *[getattr(c, f) for f in Card.TEXT_FIELDS],
            tuple(t.term for t in c.ordered_terms()),
        )
        for c in Card.objects.for_page().order_by("lesson__number", "step")
    ]
    terms = list(GlossaryTerm.objects.order_by("term").values_list("term", "definition", "example"))
    lessons = list(
        Lesson.objects.order_by("number").values_list("course__slug", "number", "slug", "title", "order")
    )
    courses = list(Course.objects.values_list("slug", "title", "description", "order"))
    return [cards, terms, lessons, courses]


@pytest.mark.django_db
def test_import_is_idempotent():
    first = run("import_lessons")
    assert "0 updated" in first and "created card llm-inference-performance/concurrency-sweep/1" in first
    before = snapshot()
    second = run("import_lessons")
    assert "0 created, 0 updated" in second
    assert snapshot() == before


@pytest.mark.django_db
def test_import_updates_a_changed_card_by_natural_key(tmp_path):
    run("import_lessons")
    run("export_lessons", "--dir", str(tmp_path))
    lesson_file = next(tmp_path.glob("*/lesson-03-*.yaml"))
    lesson_file.write_text(
        lesson_file.read_text().replace("Why does sharing cost so little?", "Why so cheap?")
    )
    card_id = Card.objects.get(lesson__slug="concurrency-sweep", step=1).pk
    out = run("import_lessons", "--dir", str(tmp_path))
    assert "updated card llm-inference-performance/concurrency-sweep/1" in out
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    assert card.pk == card_id
    assert card.question.endswith("Why so cheap?")
    assert "Why so cheap?" in card.rendered["question"]


@pytest.mark.django_db
def test_export_wipe_import_round_trip(tmp_path):
    run("import_lessons")
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    card.picture_it += "\n\nA second paragraph, edited in the admin."
    card.save()
    before = snapshot()
    run("export_lessons", "--dir", str(tmp_path))
    CardTerm.objects.all().delete()
    Card.objects.all().delete()
    GlossaryTerm.objects.all().delete()
    Lesson.objects.all().delete()
    Course.objects.all().delete()
    run("import_lessons", "--dir", str(tmp_path))
    assert snapshot() == before


@pytest.mark.django_db
def test_export_of_the_bundled_content_reproduces_its_files(tmp_path):
    run("import_lessons")
    run("export_lessons", "--dir", str(tmp_path))
    for source in sorted(CONTENT_DIR.rglob("*.yaml")):
        exported = tmp_path / source.relative_to(CONTENT_DIR)
        assert exported.read_text() == source.read_text(), source.name


@pytest.mark.django_db
def test_import_reports_a_broken_file(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "course.yaml").write_text("slug: c\ntitle: [unclosed\n")
    with pytest.raises(CommandError, match="not valid YAML"):
        run("import_lessons", "--dir", str(tmp_path))


@pytest.mark.django_db
def test_import_refuses_an_unknown_glossary_term(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "course.yaml").write_text("slug: c\ntitle: C\n")
    (tmp_path / "c" / "lesson-01-x.yaml").write_text(
        "number: 1\nslug: x\ntitle: X\ncards:\n- step: 1\n  title: T\n  question: Q\n  plain_words: A\n  terms: [Nope]\n"
    )
    with pytest.raises(CommandError, match="unknown glossary term 'Nope'"):
        run("import_lessons", "--dir", str(tmp_path))
    assert not Course.objects.exists()  # nothing half-imported


@pytest.mark.django_db
def test_bundled_seed_card_holds_every_word_of_the_seed(seed_card):
    seed = SEED.read_text(encoding="utf-8")
    card = seed_card
    for field in Card.TEXT_FIELDS:
        for line in getattr(card, field).splitlines():
            assert line.removeprefix("- ") in seed, (field, line)
    assert card.lesson.number == 3 and card.lesson.title == "Concurrency sweep" and card.step == 1
    terms = card.ordered_terms()
    assert [t.term for t in terms] == ["Decode", "Memory-bound", "Batching", "Tokens per second (tok/s)"]
    for term in terms:
        assert f"- {term.definition} Example: {term.example}" in seed

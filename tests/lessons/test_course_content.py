"""Course-wide checks over whatever content is bundled in lessons/content/ (issue 12).

They run on the imported database, so they hold for lessons added later without change.
"""

import io
import re
import unicodedata
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from lessons.content_format import CONTENT_DIR
from lessons.models import Card, GlossaryTerm, Lesson

pytestmark = pytest.mark.django_db

# Every section of the seed card's structure; none may be empty on any card.
SECTIONS = ("title", *Card.TEXT_FIELDS)


def lesson_files() -> list[Path]:
    return sorted(CONTENT_DIR.glob("*/lesson-*.yaml"))


def cards_in_course() -> list[Card]:
    return list(Card.objects.for_page().order_by("lesson__order", "lesson__number", "step"))


def comparable(text: str) -> str:
    """A question reduced to its words, so that punctuation or case cannot hide a repeat."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"[\w.]+", text))


def test_every_card_has_every_section(lessons):
    empty = [
        f"{card.lesson.number:02d}/{card.step}: {name}"
        for card in cards_in_course()
        for name in SECTIONS
        if not getattr(card, name).strip()
    ]
    empty += [
        f"{card.lesson.number:02d}/{card.step}: terms"
        for card in cards_in_course()
        if not card.ordered_terms()
    ]
    assert empty == []


def test_every_lesson_says_what_and_how_long(lessons):
    lessons_without = [
        lesson.number for lesson in Lesson.objects.all() if not lesson.intro.strip() or not lesson.minutes
    ]
    assert lessons_without == []


def test_every_lesson_has_at_least_two_cards(lessons):
    counts = {lesson.number: lesson.cards.count() for lesson in Lesson.objects.all()}
    assert {number: n for number, n in counts.items() if n < 2} == {}


def test_no_two_cards_ask_the_same_question(lessons):
    for field in ("question", "kit_question", "title"):
        seen: dict[str, str] = {}
        repeats = []
        for card in cards_in_course():
            key = comparable(getattr(card, field))
            where = f"{card.lesson.number:02d}/{card.step}"
            if key in seen:
                repeats.append(f"{field}: {seen[key]} and {where}")
            seen[key] = where
        assert repeats == []


def test_every_placeholder_on_every_card_resolves(lessons):
    unresolved = [
        f"{card.lesson.number:02d}/{card.step}: {name}"
        for card in cards_in_course()
        for name, html in card.html.items()
        if "{{" in html or "}}" in html
    ]
    assert unresolved == []


def test_every_listed_term_exists_and_every_term_is_used(lessons):
    # import_lessons refuses a card naming an unknown term; here the other half: no orphans.
    unused = list(GlossaryTerm.objects.filter(card_terms__isnull=True).values_list("term", flat=True))
    assert unused == []
    glossary = yaml.safe_load((CONTENT_DIR / "glossary.yaml").read_text(encoding="utf-8"))
    assert GlossaryTerm.objects.count() == len(glossary)


def test_glossary_terms_are_defined_once_with_an_example_and_distinct_anchors():
    glossary = yaml.safe_load((CONTENT_DIR / "glossary.yaml").read_text(encoding="utf-8"))
    names = [entry["term"] for entry in glossary]
    assert len(names) == len({name.casefold() for name in names})
    assert names == sorted(names), "glossary.yaml is kept sorted, as export_lessons writes it"
    assert all(entry["definition"].strip() and entry["example"].strip() for entry in glossary)
    anchors = {GlossaryTerm(term=name).anchor for name in names}
    assert len(anchors) == len(names)


def test_import_loads_the_whole_course_on_a_fresh_database_in_one_run():
    out = io.StringIO()
    call_command("import_lessons", stdout=out)
    expected_cards = sum(
        len(yaml.safe_load(path.read_text(encoding="utf-8"))["cards"]) for path in lesson_files()
    )
    assert Lesson.objects.count() == len(lesson_files())
    assert Card.objects.count() == expected_cards
    assert "0 updated" in out.getvalue()
    again = io.StringIO()
    call_command("import_lessons", stdout=again)
    assert "0 created, 0 updated" in again.getvalue()


def test_export_writes_the_bundled_course_back_unchanged(lessons, tmp_path):
    call_command("export_lessons", "--dir", str(tmp_path), stdout=io.StringIO())
    bundled = sorted(path.relative_to(CONTENT_DIR) for path in CONTENT_DIR.rglob("*.yaml"))
    exported = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*.yaml"))
    assert exported == bundled
    changed = [
        str(name)
        for name in bundled
        if (tmp_path / name).read_text(encoding="utf-8") != (CONTENT_DIR / name).read_text(encoding="utf-8")
    ]
    assert changed == []

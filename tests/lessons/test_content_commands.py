import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Value
from django.db.models.functions import Replace

from felab_sim.models import Scenario
from lessons.content_format import CONTENT_DIR
from lessons.models import Card, CardTerm, Course, GlossaryTerm, ImportBaseline, Lesson

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
    first = run("import_lessons", "-v", "2")
    assert "0 updated" in first and "created card llm-inference-performance/concurrency-sweep/1" in first
    before = snapshot()
    second = run("import_lessons")
    assert "0 created, 0 updated" in second
    assert snapshot() == before


@pytest.mark.django_db
def test_a_first_set_up_prints_one_summary_line():
    first = run("import_lessons")
    assert len(first.splitlines()) == 1, first[:300]
    assert first.startswith(f"Lesson content from {CONTENT_DIR}: ") and " created, 0 updated" in first


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


DRAFT_LESSON = """\
number: 1
slug: x
title: X
order: 1
intro: |-
  What this lesson is about.

  And why it matters.
minutes: 12
published: false
cards:
- step: 1
  published: false
  title: T
  question: Q
  plain_words: A
  picture_it: ''
  real_numbers_source: ''
  real_numbers: ''
  kit_question: ''
  kit_answer: ''
  more_detail: ''
  terms: []
"""


@pytest.mark.django_db
def test_intro_minutes_and_drafts_import_and_export_unchanged(tmp_path):
    source, exported = tmp_path / "source", tmp_path / "exported"
    (source / "c").mkdir(parents=True)
    (source / "c" / "course.yaml").write_text("slug: c\ntitle: C\ndescription: ''\norder: 0\n")
    (source / "c" / "lesson-01-x.yaml").write_text(DRAFT_LESSON)
    run("import_lessons", "--dir", str(source))
    lesson = Lesson.objects.get(slug="x")
    assert lesson.intro == "What this lesson is about.\n\nAnd why it matters."
    assert "<p>And why it matters.</p>" in lesson.intro_html
    assert lesson.minutes == 12
    assert lesson.published is False
    assert Card.objects.get(lesson=lesson).published is False
    run("export_lessons", "--dir", str(exported))
    assert (exported / "c" / "lesson-01-x.yaml").read_text() == DRAFT_LESSON


@pytest.mark.django_db
def test_bundled_lessons_and_cards_are_published(lessons):
    assert Lesson.objects.exists() and not Lesson.objects.filter(published=False).exists()
    assert Card.objects.exists() and not Card.objects.filter(published=False).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("minutes: soon", "'minutes' must be a whole number"),
        ("published: 'no'", "'published' must be true or false"),
    ],
)
def test_import_refuses_unreadable_minutes_or_published(tmp_path, line, message):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "course.yaml").write_text("slug: c\ntitle: C\n")
    (tmp_path / "c" / "lesson-01-x.yaml").write_text(f"number: 1\nslug: x\ntitle: X\n{line}\ncards: []\n")
    with pytest.raises(CommandError, match=message):
        run("import_lessons", "--dir", str(tmp_path))


SEED_LABEL = "card llm-inference-performance/concurrency-sweep/1"


def edit_in_the_admin(card: Card, **changes) -> None:
    for name, value in changes.items():
        setattr(card, name, value)
    card.save()


def copy_of_the_bundled_content(tmp_path: Path) -> Path:
    run("export_lessons", "--dir", str(tmp_path))
    return tmp_path


@pytest.mark.django_db
def test_an_edit_in_the_database_survives_the_import_and_is_reported(seed_card):
    edit_in_the_admin(seed_card, plain_words="Rewritten by Ines.")
    out = run("import_lessons")
    card = Card.objects.get(pk=seed_card.pk)
    assert card.plain_words == "Rewritten by Ines."
    assert f"conflict: {SEED_LABEL}, field 'plain_words'" in out
    assert "\n  - file:     To write each token" in out
    assert "\n  + database: Rewritten by Ines.\n" in out
    assert "0 updated" in out and "1 conflicts" in out
    assert "export_lessons" in out and "--force" in out  # how to resolve it


@pytest.mark.django_db
def test_force_takes_the_files_version(seed_card):
    original = seed_card.plain_words
    edit_in_the_admin(seed_card, plain_words="Rewritten by Ines.")
    out = run("import_lessons", "--force")
    assert f"updated {SEED_LABEL}" in out and "0 conflicts" in out
    assert Card.objects.get(pk=seed_card.pk).plain_words == original
    # Forced values are the new baseline: the next plain import has nothing to report.
    assert "0 created, 0 updated" in run("import_lessons") and "0 conflicts" in run("import_lessons")


@pytest.mark.django_db
def test_a_file_change_updates_the_fields_nobody_edited_and_keeps_the_edited_one(seed_card, tmp_path):
    content = copy_of_the_bundled_content(tmp_path)
    edit_in_the_admin(seed_card, plain_words="Rewritten by Ines.")
    lesson_file = next(content.glob("*/lesson-03-*.yaml"))
    text = lesson_file.read_text()
    text = text.replace("To write each token", "In the file, to write each token")
    text = text.replace("Why does sharing cost so little?", "Why so cheap?")
    lesson_file.write_text(text)
    out = run("import_lessons", "--dir", str(content))
    card = Card.objects.get(pk=seed_card.pk)
    assert card.question.endswith("Why so cheap?")  # unedited in the database: the file wins
    assert card.plain_words == "Rewritten by Ines."  # edited: kept, and reported
    assert f"updated {SEED_LABEL}" in out
    assert "field 'plain_words'" in out and "- file:     In the file, to write each token" in out
    assert "field 'question'" not in out


@pytest.mark.django_db
def test_edited_terms_live_numbers_scenario_and_drafts_survive_the_import(seed_card):
    CardTerm.objects.filter(card=seed_card, term__term="Batching").delete()
    seed_card.numbers.filter(order=1).update(stated="54")
    Lesson.objects.filter(pk=seed_card.lesson_id).update(published=False)
    edit_in_the_admin(seed_card, scenario=None, published=False)
    out = run("import_lessons")
    card = Card.objects.get(pk=seed_card.pk)
    assert "Batching" not in [t.term for t in card.ordered_terms()]
    assert card.numbers.get(order=1).stated == "54"
    assert card.scenario is None and card.published is False
    assert card.lesson.published is False
    for field in ("terms", "live_numbers", "scenario", "published"):
        assert f"{SEED_LABEL}, field '{field}'" in out
    assert "lesson llm-inference-performance/concurrency-sweep, field 'published'" in out


@pytest.mark.django_db
def test_edited_glossary_course_and_scenario_survive_the_import(lessons):
    term = GlossaryTerm.objects.get(term="Decode")
    term.example = "Mine."
    term.save()
    Course.objects.update(title="My course")
    Scenario.objects.update(slots=4)
    out = run("import_lessons")
    assert GlossaryTerm.objects.get(term="Decode").example == "Mine."
    assert Course.objects.get().title == "My course"
    assert set(Scenario.objects.values_list("slots", flat=True)) == {4}
    assert "term Decode, field 'example'" in out
    assert "course llm-inference-performance, field 'title'" in out
    assert "field 'slots'" in out


@pytest.mark.django_db
def test_export_then_import_changes_nothing(seed_card, tmp_path):
    edit_in_the_admin(seed_card, plain_words="Rewritten by Ines.", published=False)
    before, saved_at = snapshot(), Card.objects.get(pk=seed_card.pk).updated_at
    out = run("import_lessons", "--dir", str(copy_of_the_bundled_content(tmp_path)))
    assert "0 created, 0 updated" in out and "0 conflicts" in out
    assert snapshot() == before
    assert Card.objects.get(pk=seed_card.pk).updated_at == saved_at  # not even saved again
    # The exported edit is now what the files say: importing again is quiet too.
    assert "0 conflicts" in run("import_lessons", "--dir", str(tmp_path))


@pytest.mark.django_db
def test_without_a_recorded_import_only_empty_fields_are_filled(seed_card):
    # A database from before import baselines were kept: its values may be anyone's edits.
    ImportBaseline.objects.all().delete()
    edit_in_the_admin(seed_card, plain_words="Edited before baselines existed.", picture_it="")
    out = run("import_lessons")
    card = Card.objects.get(pk=seed_card.pk)
    assert card.plain_words == "Edited before baselines existed."
    assert card.picture_it.startswith("A bus takes about the same time")
    assert "field 'plain_words'" in out and "field 'picture_it'" not in out


def test_make_run_and_serve_import_without_force():
    # They import at every start: with --force they would revert the admin's edits.
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    imports = [line for line in makefile.splitlines() if "import_lessons" in line]
    assert len(imports) >= 2
    assert not [line for line in imports if "--force" in line]


@pytest.mark.django_db
def test_a_live_numbers_tolerance_and_note_survive_import_and_export(tmp_path):
    run("import_lessons")
    run("export_lessons", "--dir", str(tmp_path))
    lesson_file = next(tmp_path.glob("*/lesson-03-*.yaml"))
    text = lesson_file.read_text()
    first_number = "    live: speedup.c8\n    stated: '5.1'\n"
    assert first_number in text
    lesson_file.write_text(
        text.replace(
            first_number, first_number + "    tolerance: 0.005\n    note: measured, not modelled\n", 1
        )
    )
    run("import_lessons", "--dir", str(tmp_path), "--force")
    number = Card.objects.get(lesson__number=3, step=1).numbers.get(live="speedup.c8")
    assert (number.tolerance, number.note) == (0.005, "measured, not modelled")

    again = tmp_path / "again"
    run("export_lessons", "--dir", str(again))
    assert (again / lesson_file.relative_to(tmp_path)).read_text() == lesson_file.read_text()


@pytest.mark.django_db
def test_import_refuses_a_tolerance_that_is_not_a_fraction(tmp_path):
    run("import_lessons")
    run("export_lessons", "--dir", str(tmp_path))
    lesson_file = next(tmp_path.glob("*/lesson-03-*.yaml"))
    lesson_file.write_text(
        lesson_file.read_text().replace("stated: '54.1'\n", "stated: '54.1'\n    tolerance: 5\n", 1)
    )
    with pytest.raises(CommandError, match="tolerance is a fraction"):
        run("import_lessons", "--dir", str(tmp_path), "--force")


@pytest.mark.django_db
def test_import_refuses_a_live_number_inside_an_html_attribute(lessons, tmp_path):
    content = copy_of_the_bundled_content(tmp_path)
    lesson_file = next(content.glob("*/lesson-03-*.yaml"))
    text = lesson_file.read_text().replace(
        "plain_words: To write each token",
        'plain_words: <abbr title="{{sim.c8.agg_tok_s}}">Hm</abbr> To write each token',
    )
    lesson_file.write_text(text)
    with pytest.raises(CommandError, match=r"card step 1: \{\{sim.c8.agg_tok_s\}\} is inside a link target"):
        run("import_lessons", "--dir", str(content))


@pytest.mark.django_db
def test_import_refuses_a_file_with_the_keys_from_before_live_numbers_and_names_the_new_ones(
    lessons, tmp_path
):
    content = copy_of_the_bundled_content(tmp_path)
    lesson_file = next(content.glob("*/lesson-03-*.yaml"))
    before = Card.objects.get(lesson__number=3, step=1).numbers.count()
    lesson_file.write_text(lesson_file.read_text().replace("  live_numbers:\n", "  figures:\n", 1))
    with pytest.raises(CommandError, match=r"card step 1: 'figures' is now 'live_numbers'$"):
        run("import_lessons", "--dir", str(content), "--force")

    lesson_file.write_text(
        lesson_file.read_text()
        .replace("  figures:\n", "  live_numbers:\n", 1)
        .replace("    live: speedup.c8\n", "    figure: speedup.c8\n", 1)
    )
    with pytest.raises(CommandError, match=r"card step 1: 'figure' is now 'live'$"):
        run("import_lessons", "--dir", str(content), "--force")
    assert Card.objects.get(lesson__number=3, step=1).numbers.count() == before


# --------------------------------------------------------------------------- hostile files

GOOD_GLOSSARY = "- term: Slot\n  definition: A place for one request.\n"
LESSON_HEAD = "number: 1\nslug: x\ntitle: X\ncards:\n- step: 1\n  title: T\n  question: Q\n"


def content_with(tmp_path: Path, lesson: bytes) -> Path:
    """A course with a good glossary and one lesson file holding ``lesson``."""
    (tmp_path / "glossary.yaml").write_text(GOOD_GLOSSARY)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "course.yaml").write_text("slug: c\ntitle: C\n")
    (tmp_path / "c" / "lesson-01-x.yaml").write_bytes(lesson)
    return tmp_path


def assert_nothing_imported() -> None:
    assert not GlossaryTerm.objects.exists()
    assert not Course.objects.exists()
    assert not ImportBaseline.objects.exists()


# Nine levels of nine aliases: a 400-byte file that expands to 9**8 copies of "lol".
ALIAS_BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(7)
)


@pytest.mark.django_db
def test_import_refuses_yaml_aliases_by_file_and_line(tmp_path):
    glossary = "- term: Slot\n  definition: &d A place for one request.\n- term: Slots\n  definition: *d\n"
    (tmp_path / "glossary.yaml").write_text(glossary)
    with pytest.raises(CommandError, match=r"glossary.yaml: line 2: YAML anchors and aliases"):
        run("import_lessons", "--dir", str(tmp_path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_import_refuses_an_alias_bomb_without_expanding_it(tmp_path):
    assert len(ALIAS_BOMB) < 500
    path = content_with(tmp_path, (LESSON_HEAD + "  plain_words: A\n").encode())
    (path / "scenarios.yaml").write_text(ALIAS_BOMB)
    with pytest.raises(CommandError, match=r"scenarios.yaml: line 1: YAML anchors and aliases"):
        run("import_lessons", "--dir", str(path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_import_reports_invalid_utf8_by_file_and_line(tmp_path):
    path = content_with(tmp_path, (LESSON_HEAD + "  plain_words: caf").encode() + b"\xe9\n")
    with pytest.raises(CommandError, match=r"lesson-01-x.yaml: line 8: not UTF-8 \(byte 0xe9\)"):
        run("import_lessons", "--dir", str(path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_import_refuses_an_overlong_field_by_file_and_line(tmp_path):
    long_text = "word " * 5_000  # 25,000 characters
    path = content_with(tmp_path, (LESSON_HEAD + f"  plain_words: {long_text}\n").encode())
    with pytest.raises(CommandError, match=r"lesson-01-x.yaml: line 8: a value of 24,999 characters"):
        run("import_lessons", "--dir", str(path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_import_refuses_an_oversized_file(tmp_path):
    padding = b"# padding\n" * 110_000  # 1.1 MB of comments
    path = content_with(tmp_path, LESSON_HEAD.encode() + b"  plain_words: A\n" + padding)
    with pytest.raises(CommandError, match=r"lesson-01-x.yaml: 1,100,086 bytes, over the limit of 1,048,576"):
        run("import_lessons", "--dir", str(path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_import_names_the_file_whose_data_has_the_wrong_shape(tmp_path):
    path = content_with(tmp_path, LESSON_HEAD.replace("number: 1", "number: one").encode())
    with pytest.raises(CommandError, match=r"lesson-01-x.yaml: not lesson content as expected"):
        run("import_lessons", "--dir", str(path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_a_yaml_syntax_error_names_its_line(tmp_path):
    path = content_with(tmp_path, (LESSON_HEAD + "  plain_words: [unclosed\n").encode())
    with pytest.raises(CommandError, match=r"lesson-01-x.yaml: line \d+: not valid YAML"):
        run("import_lessons", "--dir", str(path))
    assert_nothing_imported()


@pytest.mark.django_db
def test_a_conflict_shows_the_changed_words_not_the_whole_text(lessons):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=2)
    lines = card.real_numbers.split("\n")
    assert len(lines) == 4 and "far inside the" in lines[0]
    edit_in_the_admin(card, real_numbers=card.real_numbers.replace("far inside", "well inside"))
    out = run("import_lessons")
    conflict = out[out.index("conflict: ") : out.index("Lesson content from")]
    assert conflict.splitlines()[1:] == [
        "  @@ file line 1 @@",
        "  - file:     …rst token in {{sim.c8.ttft_p95_ms}} ms, far inside the {{sim.slo_ms}} ms target.",
        "  + database: …rst token in {{sim.c8.ttft_p95_ms}} ms, well inside the {{sim.slo_ms}} ms target.",
    ]
    for untouched in lines[1:]:
        assert untouched not in out


@pytest.mark.django_db
def test_text_saved_with_crlf_before_the_fix_is_no_conflict_and_exports_in_block_style(lessons, tmp_path):
    # Rows an admin save left with a browser's \r\n line breaks, written past save() as they were.
    Card.objects.update(real_numbers=Replace("real_numbers", Value("\n"), Value("\r\n")))
    GlossaryTerm.objects.update(definition=Replace("definition", Value("\n"), Value("\r\n")))
    assert Card.objects.filter(real_numbers__contains="\r\n").count() > 10
    out = run("import_lessons")
    assert "0 created, 0 updated" in out and "0 conflicts" in out
    run("export_lessons", "--dir", str(tmp_path))
    for source in sorted(CONTENT_DIR.rglob("*.yaml")):
        assert (tmp_path / source.relative_to(CONTENT_DIR)).read_text() == source.read_text(), source.name


@pytest.mark.django_db
def test_import_reads_a_quoted_crlf_in_a_file_as_a_plain_line_break(seed_card, tmp_path):
    content = copy_of_the_bundled_content(tmp_path)
    lesson_file = next(content.glob("*/lesson-03-*.yaml"))
    text = lesson_file.read_text()
    old = next(line for line in text.splitlines() if line.startswith("  kit_question: Throughput went up"))
    lesson_file.write_text(text.replace(old, '  kit_question: "Two lines:\\r\\nthe second."', 1))
    out = run("import_lessons", "--dir", str(content))
    assert f"updated {SEED_LABEL}" in out and "0 conflicts" in out
    assert Card.objects.get(pk=seed_card.pk).kit_question == "Two lines:\nthe second."


@pytest.mark.django_db
def test_spaces_typed_before_a_line_break_do_not_turn_the_export_into_a_quoted_string(seed_card, tmp_path):
    lines = seed_card.real_numbers.split("\n")
    edit_in_the_admin(seed_card, real_numbers="\n".join([lines[0] + "  ", *lines[1:]]))
    assert Card.objects.get(pk=seed_card.pk).real_numbers == "\n".join(lines)
    assert "0 conflicts" in run("import_lessons")
    run("export_lessons", "--dir", str(tmp_path))
    lesson_file = next(tmp_path.glob("*/lesson-03-*.yaml"))
    assert lesson_file.read_text() == (CONTENT_DIR / lesson_file.relative_to(tmp_path)).read_text()


CHECKED_LESSON = """\
number: 1
slug: x
title: X
order: 1
cards:
- step: 1
  title: T
  question: Q
  plain_words: About 55.6 tokens a second, 3 times the draft's, and 12% of replies break.
  terms: []
  checks:
  - number: '3'
    expr: 55.6 / 18.5
    tolerance: 0.05
  - number: 12%
    source: the practice server's rule
"""


@pytest.mark.django_db
def test_a_cards_checks_import_and_export_unchanged(tmp_path):
    source, exported = tmp_path / "source", tmp_path / "exported"
    (source / "c").mkdir(parents=True)
    (source / "c" / "course.yaml").write_text("slug: c\ntitle: C\ndescription: ''\norder: 0\n")
    (source / "c" / "lesson-01-x.yaml").write_text(CHECKED_LESSON)
    run("import_lessons", "--dir", str(source))
    card = Card.objects.get(lesson__slug="x")
    assert card.number_checks == [
        {"number": "3", "expr": "55.6 / 18.5", "tolerance": 0.05},
        {"number": "12%", "source": "the practice server's rule"},
    ]
    assert card.unchecked_numbers() == []
    run("export_lessons", "--dir", str(exported))
    # Written back as the file had them, last in the card: "checks:" and its entries unchanged.
    checks = "  checks:\n" + CHECKED_LESSON.split("  checks:\n")[1]
    assert (exported / "c" / "lesson-01-x.yaml").read_text().endswith("  terms: []\n" + checks)


@pytest.mark.django_db
def test_import_refuses_a_check_it_cannot_read(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "course.yaml").write_text("slug: c\ntitle: C\n")
    broken = CHECKED_LESSON.replace("    source: the practice server's rule\n", "    why: measured\n")
    (tmp_path / "c" / "lesson-01-x.yaml").write_text(broken)
    with pytest.raises(CommandError, match="check 12%: give an expr to work it out from, or the source"):
        run("import_lessons", "--dir", str(tmp_path))

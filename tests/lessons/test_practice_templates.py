"""Practice templates as content: saved only when valid, imported, exported byte for byte."""

import io
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from lessons.models import Course, Lesson, PracticeTemplate

pytestmark = pytest.mark.django_db

KV_DOUBLING = {
    "slug": "kv-doubling",
    "title": "What doubling the context does",
    "calculator": "kv-cache",
    "output": "kv_gb_per_conversation",
    "asks": "ratio",
    "change": {"context_tokens": 2},
    "question": "A conversation holds {context_tokens} tokens. By what factor does its KV cache grow when it doubles?",
    "draws": [{"name": "context_tokens", "range": [4096, 65536], "step": 4096}],
    "solution": "{out.kv_gb_per_conversation} becomes {after.kv_gb_per_conversation}: {answer}×.",
}


@pytest.fixture
def lesson() -> Lesson:
    course = Course.objects.create(slug="c", title="Course")
    return Lesson.objects.create(course=course, number=5, title="KV cache", slug="kv-cache")


def template(lesson: Lesson, **changes) -> PracticeTemplate:
    return PracticeTemplate(lesson=lesson, **{**KV_DOUBLING, **changes})


def reasons(row: PracticeTemplate) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as raised:
        row.full_clean()
    return raised.value.message_dict


def test_a_valid_template_saves_and_draws_the_same_problem_from_the_same_seed(lesson):
    row = template(lesson)
    row.full_clean()
    row.save()
    first, again, other = row.problem(7), row.problem(7), row.problem(8)
    assert first.question == again.question and first.answer == again.answer == pytest.approx(2.0)
    assert "{" not in first.question
    assert [row.problem(seed).inputs["context_tokens"] for seed in range(20)].count(
        first.inputs["context_tokens"]
    ) < 20, "every seed drew the same context"
    assert other.seed == 8


def test_a_placeholder_nothing_draws_is_refused_with_its_name(lesson):
    errors = reasons(template(lesson, question=KV_DOUBLING["question"] + " ({users} users)"))
    assert errors == {"question": ["{users} is neither drawn nor fixed"]}


def test_a_drawn_input_the_question_never_shows_is_refused(lesson):
    errors = reasons(template(lesson, question="By what factor does the KV cache grow?"))
    assert errors["question"] == ["the question never shows the drawn {context_tokens}"]


def test_a_draw_outside_the_calculators_ground_is_refused_naming_the_input_and_the_rule(lesson):
    draws = [{"name": "context_tokens", "log": [1000, 1_000_000_000]}]
    errors = reasons(template(lesson, draws=draws))
    [message] = errors["draws"]
    assert message.startswith("the extremes (context_tokens=1,000,000,000")
    assert "context_tokens must be an integer at least 1 and at most 100,000,000" in message


def test_a_sampled_draw_the_calculator_refuses_is_caught_not_only_the_extremes(lesson):
    # Both ends are integers; a log range between them draws values like 1.5, which an
    # integer input refuses: only the sampled seeds can find that.
    draws = [{"name": "users", "log": [1, 3]}]
    question = "{users} users each hold {context_tokens} tokens."
    row = template(lesson, draws=[*KV_DOUBLING["draws"], *draws], question=question)
    [message] = reasons(row)["draws"]
    assert message.startswith("seed ") and "users must be an integer" in message


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"calculator": "abacus"}, "calculator", "'abacus' is not a calculator"),
        ({"output": "kv_furlongs"}, "output", "kv-cache has no output 'kv_furlongs'"),
        (
            {"unit": "ms", "asks": "value", "change": {}, "solution": ""},
            "unit",
            "does not convert to the output's 'GB'",
        ),
        ({"fixed": {"context_tokens": 10}}, "fixed", "context_tokens both drawn and fixed"),
        ({"change": {}}, "change", "asking after a change needs the change"),
        (
            {"draws": [{"name": "context_tokens", "range": [4096, 1024], "step": 1}]},
            "draws",
            "low below high",
        ),
        ({"solution": "{out.nothing}"}, "solution", "{out.nothing} names no input or output"),
        (
            {"solution": "{context_tokens} tokens × 2 = {out.kv_gb_per_conversation}"},
            "solution",
            "the left side is",
        ),
    ],
)
def test_each_kind_of_mistake_is_refused_with_its_reason(lesson, changes, field, words):
    errors = reasons(template(lesson, **changes))
    assert any(words in message for message in errors[field]), errors


def test_a_unit_the_answer_converts_to_is_accepted_and_the_answer_is_in_it(lesson):
    row = template(lesson, asks="value", change={}, unit="MB", solution="")
    row.full_clean()
    problem = row.problem(1)
    assert problem.unit == "MB"
    assert problem.answer == pytest.approx(1000 * problem.before.value("kv_gb_per_conversation"))


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def write_course(directory: Path, practice: str) -> Path:
    course = directory / "c"
    course.mkdir()
    (course / "course.yaml").write_text("slug: c\ntitle: Course\ndescription: ''\norder: 0\n")
    (course / "lesson-05-kv-cache.yaml").write_text(
        "number: 5\nslug: kv-cache\ntitle: KV cache\norder: 5\ncards: []\n"
    )
    path = course / "practice-05-kv-cache.yaml"
    path.write_text(practice)
    return path


PRACTICE_FILE = """\
lesson: kv-cache
templates:
- slug: kv-doubling
  title: What doubling the context does
  calculator: kv-cache
  output: kv_gb_per_conversation
  asks: ratio
  question: A conversation holds {context_tokens} tokens. By what factor does its KV cache grow when it doubles?
  draws:
  - name: context_tokens
    range:
    - 4096
    - 65536
    step: 4096
  change:
    context_tokens: 2
  hint: |-
    Every token keeps its own keys and values.
    Count them.
- slug: kv-draft
  title: A draft
  published: false
  calculator: kv-cache
  output: kv_gb_total
  question: '{users} users, 8,192 tokens each: how many GB of KV cache?'
  draws:
  - name: users
    values:
    - 1
    - 4
    - 16
  tolerance: 0.05
  unit: GB
"""


def test_a_practice_file_imports_and_exports_byte_for_byte(tmp_path):
    source = write_course(tmp_path / "in", PRACTICE_FILE) if (tmp_path / "in").mkdir() is None else None
    run("import_lessons", "--dir", str(tmp_path / "in"))
    rows = list(PracticeTemplate.objects.order_by("order"))
    assert [(row.slug, row.order, row.published) for row in rows] == [
        ("kv-doubling", 1, True),
        ("kv-draft", 2, False),
    ]
    assert rows[0].hint == "Every token keeps its own keys and values.\nCount them."
    run("export_lessons", "--dir", str(tmp_path / "out"))
    exported = tmp_path / "out" / "c" / "practice-05-kv-cache.yaml"
    assert exported.read_text() == source.read_text()
    assert "0 created, 0 updated" in run("import_lessons", "--dir", str(tmp_path / "in"))


def test_an_admin_edit_survives_the_import_and_is_reported_as_a_conflict(tmp_path):
    write_course(tmp_path, PRACTICE_FILE)
    run("import_lessons", "--dir", str(tmp_path))
    PracticeTemplate.objects.filter(slug="kv-doubling").update(title="Doubling, edited in the admin")
    report = run("import_lessons", "--dir", str(tmp_path))
    assert "practice kv-doubling" in report and "title" in report
    assert PracticeTemplate.objects.get(slug="kv-doubling").title == "Doubling, edited in the admin"
    run("import_lessons", "--dir", str(tmp_path), "--force")
    assert PracticeTemplate.objects.get(slug="kv-doubling").title == "What doubling the context does"


def test_the_import_refuses_a_template_its_calculator_cannot_draw_naming_file_and_slug(tmp_path):
    bad = PRACTICE_FILE.replace("- 65536", "- 1000000000").replace("range:", "range:", 1)
    bad = bad.replace("step: 4096", "step: 4096000")
    write_course(tmp_path, bad)
    with pytest.raises(CommandError) as raised:
        run("import_lessons", "--dir", str(tmp_path))
    message = str(raised.value)
    assert "practice-05-kv-cache.yaml: template kv-doubling: draws:" in message
    assert "at most 100,000,000" in message
    assert not PracticeTemplate.objects.exists()


def test_a_template_the_file_leaves_unchanged_is_still_refused_once_the_code_refuses_it(
    tmp_path, monkeypatch
):
    # A release runs the import: a template that a new version of the site can no longer serve
    # (here its address taken by a page) stops it, though neither the file nor the row changed.
    write_course(tmp_path, PRACTICE_FILE)
    run("import_lessons", "--dir", str(tmp_path))
    monkeypatch.setattr("lessons.models.RESERVED_PRACTICE_SLUGS", frozenset({"kv-doubling"}))
    with pytest.raises(CommandError, match="template kv-doubling: slug: /practice/kv-doubling/ is a page"):
        run("import_lessons", "--dir", str(tmp_path))


def test_a_practice_file_naming_no_lesson_of_its_course_is_refused(tmp_path):
    write_course(tmp_path, PRACTICE_FILE.replace("lesson: kv-cache", "lesson: nowhere"))
    with pytest.raises(CommandError, match="no lesson 'nowhere' in course c"):
        run("import_lessons", "--dir", str(tmp_path))


def test_the_drill_command_lists_templates_and_prints_a_seeds_problem_as_json(lessons):
    import json

    listed = json.loads(run("drill", "--list", "--json"))
    assert len(listed) >= 34 and {"template", "lesson", "title"} <= set(listed[0])
    printed = json.loads(run("drill", "l05-kv-per-conversation", "--seed", "3", "--json"))
    problem = PracticeTemplate.objects.get(slug="l05-kv-per-conversation").problem(3)
    assert printed == {
        "template": "l05-kv-per-conversation",
        "seed": 3,
        "question": problem.question,
        "inputs": printed["inputs"],
        "answer": {"value": problem.answer, "unit": "GB"},
        "tolerance": 0.1,
        "steps": problem.steps,
        "mistakes": [mistake.as_json() for mistake in problem.mistakes],
    }
    with pytest.raises(CommandError, match="is not a practice template"):
        run("drill", "nothing-here")

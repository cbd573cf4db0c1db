"""Named mistakes: each computed from the same draw, offered only where an answer can tell it
apart from the right one, named on the page and by `manage.py drill --answer`."""

import json

import pytest
from django.core.management import call_command

from felab_sim.engine.core.numbers import format_significant, parse_number, with_unit
from felab_sim.engine.problems.answers import read_answer
from felab_sim.engine.problems.drills import draw_problem
from felab_sim.engine.problems.mistakes import bands_apart
from lessons.models import PracticeTemplate
from tests.lessons.test_practice_bundled import SPECS

SEEDS = 1000
NEAR_SEEDS = 300
TYPED_SEEDS = 200


def test_templates_name_three_mistakes_on_average_each_offered_in_some_draws():
    offered_somewhere = 0
    for slug, spec in SPECS.items():
        seen = {m.slug: 0 for m in spec.mistakes}
        for seed in range(0, SEEDS, 10):
            for mistake in draw_problem(spec, seed).mistakes:
                seen[mistake.slug] += 1
        assert all(seen.values()), f"{slug}: {[k for k, v in seen.items() if not v]} never told apart"
        offered_somewhere += len(seen)
    assert offered_somewhere / len(SPECS) >= 3


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_over_a_thousand_seeds_every_offered_mistake_is_named_and_the_printed_answer_is_right(slug):
    spec = SPECS[slug]
    for seed in range(SEEDS):
        problem = draw_problem(spec, seed)
        values = [m.value for m in problem.mistakes]
        for index, value in enumerate(values):
            assert max(value, problem.answer) > min(value, problem.answer) * (1 + spec.tolerance / 2)
            for other in values[index + 1 :]:
                assert bands_apart(value, other, spec.tolerance), (slug, seed, values)
        for mistake in problem.mistakes:
            graded = problem.grade(mistake.value)
            assert graded.checked.verdict != "right" and graded.mistake == mistake, (slug, seed)
        assert problem.grade(problem.answer).mistake is None
        printed = problem.grade(parse_number(problem.answer_number))
        assert printed.checked.verdict == "right" and printed.mistake is None, (slug, seed)


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_a_mistakes_value_is_never_right_unless_it_is_the_right_answer_rounded(slug):
    """A mistake inside the tolerance of the right answer (GiB for GB is 7.4%, the tolerance 10%)
    is named and not counted right. Only a value within half the tolerance (what rounding the
    printed answer may give) passes as right, and one too near an earlier mistake's value to tell
    the two apart goes unnamed."""
    spec = SPECS[slug]
    for seed in range(NEAR_SEEDS):
        problem = draw_problem(spec, seed)
        for mistake in spec.mistakes:
            value = mistake.value_for(problem)
            if value is None or max(value, problem.answer) <= min(value, problem.answer) * (
                1 + spec.tolerance / 2
            ):
                continue
            unnamed = mistake.slug not in {m.slug for m in problem.mistakes}
            if unnamed and any(not bands_apart(value, m.value, spec.tolerance) for m in problem.mistakes):
                continue
            graded = problem.grade(value)
            assert graded.checked.verdict != "right" and graded.mistake is not None, (
                slug,
                seed,
                mistake.slug,
            )


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_every_offered_mistakes_value_typed_with_its_unit_is_read_and_named(slug):
    """No refusal keeps a mistake from being named: the no-sigma mistake's 2.5 where a probability
    is asked (a plain number, so typed bare) is graded, not questioned as a percent."""
    spec = SPECS[slug]
    for seed in range(TYPED_SEEDS):
        problem = draw_problem(spec, seed)
        for mistake in problem.mistakes:
            typed = with_unit(format_significant(mistake.value, 4), problem.unit)
            read = read_answer(
                typed,
                problem.unit,
                above_zero=True,
                share=problem.share,
                right_as_typed=problem.right_as_typed(typed),
            )
            assert problem.grade(read.value).mistake == mistake, (slug, seed, typed)


def test_kv_counted_once_is_named():
    spec = SPECS["l05-kv-per-conversation"]
    problem = draw_problem(spec, 1)
    graded = problem.grade(problem.answer / 2)
    assert graded.mistake is not None and graded.mistake.slug == "kv-once"
    assert "a key and a value" in graded.mistake.says


def _drill(*args: str) -> dict:
    from io import StringIO

    out = StringIO()
    call_command("drill", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_the_drill_command_grades_an_answer_as_the_site_does(lessons):
    problem = PracticeTemplate.objects.get(slug="l05-kv-per-conversation").problem(1)
    half = f"{problem.answer / 2:.4f} GB"
    graded = _drill("l05-kv-per-conversation", "--seed", "1", "--answer", half, "--json")
    assert graded["verdict"] in {"close", "off"} and graded["mistake"]["slug"] == "kv-once"
    assert graded["tolerance"] == 0.1 and graded["answer"]["unit"] == "GB"
    right = _drill("l05-kv-per-conversation", "--seed", "1", "--answer", f"{problem.answer} GB", "--json")
    assert right["verdict"] == "right" and right["mistake"] is None
    shown = _drill("l05-kv-per-conversation", "--seed", "1", "--json")
    assert {m["slug"] for m in shown["mistakes"]} >= {"kv-once"} and len(shown["steps"]) == 3
    assert all(isinstance(m["value"], float) for m in shown["mistakes"])


@pytest.mark.django_db
def test_the_page_names_the_mistake(client, lessons):
    template = PracticeTemplate.objects.get(slug="l05-kv-per-conversation")
    problem = template.problem(1)
    page = client.post(template.get_absolute_url(), {"seed": 1, "answer": f"{problem.answer / 2:.4f}"})
    assert "counting the cache once" in page.content.decode()


@pytest.mark.django_db
def test_an_answer_within_the_tolerance_but_nearer_a_mistake_is_named_and_not_counted_right(client, lessons):
    # Seed 6 of l04-quant-ceiling: the ceiling is 30.8 tok/s, 6% below the milliseconds a token (32.5).
    template = PracticeTemplate.objects.get(slug="l04-quant-ceiling")
    problem = template.problem(6)
    assert problem.answer == pytest.approx(30.77, abs=0.01)
    page = client.post(template.get_absolute_url(), {"seed": 6, "answer": "32.5 tok/s"}).content.decode()
    assert (
        "Close: 6% high, nearer a common mistake than the calculator&#x27;s value, so not counted right"
        in page
    )
    assert "That is milliseconds per token" in page
    right = client.post(template.get_absolute_url(), {"seed": 6, "answer": "31 tok/s"}).content.decode()
    assert "Right: 1% high" in right


@pytest.mark.django_db
def test_the_margin_typed_for_a_probability_is_named_not_refused(client, lessons):
    # Seed 5 of l16-preference-probability: a margin of 2.5; σ(2.5) = 0.92 is the probability.
    template = PracticeTemplate.objects.get(slug="l16-preference-probability")
    page = client.post(template.get_absolute_url(), {"seed": 5, "answer": "2.5"}).content.decode()
    assert "Off: 2.7× too high" in page and "That is the margin itself" in page
    assert "a share from 0 to 1" not in page
    questioned = client.post(template.get_absolute_url(), {"seed": 5, "answer": "30"}).content.decode()
    assert "the answer is a share from 0 to 1" in questioned

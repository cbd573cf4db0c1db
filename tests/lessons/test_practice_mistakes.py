"""Named mistakes: each computed from the same draw, offered only where an answer can tell it
apart from the right one, named on the page and by `manage.py drill --answer`."""

import json

import pytest
from django.core.management import call_command

from felab_sim.engine.drills import draw_problem
from felab_sim.engine.mistakes import bands_apart
from lessons.models import PracticeTemplate
from tests.lessons.test_practice_bundled import SPECS

SEEDS = 1000


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
def test_over_a_thousand_seeds_every_offered_mistake_stays_apart_from_the_answer(slug):
    spec = SPECS[slug]
    for seed in range(SEEDS):
        problem = draw_problem(spec, seed)
        values = [problem.answer] + [m.value for m in problem.mistakes]
        for index, value in enumerate(values):
            for other in values[index + 1 :]:
                assert bands_apart(value, other, spec.tolerance), (slug, seed, values)
        for mistake in problem.mistakes:
            graded = problem.grade(mistake.value)
            assert graded.checked.verdict != "right" and graded.mistake == mistake, (slug, seed)
        assert problem.grade(problem.answer).mistake is None


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

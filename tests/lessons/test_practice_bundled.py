"""Every bundled practice template draws only cases its calculator accepts, with a finite answer."""

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from felab_sim.engine.problems.drill_specs import DrillError, DrillSpec
from felab_sim.engine.problems.drills import draw_problem, draw_question
from lessons.content_format import CONTENT_DIR

LESSONS_WITH_A_CALCULATOR = {0, 1, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}


def bundled() -> dict[str, DrillSpec]:
    specs = {}
    for path in sorted(CONTENT_DIR.glob("*/practice-*.yaml")):
        for entry in yaml.safe_load(path.read_text())["templates"]:
            specs[entry["slug"]] = DrillSpec.from_data(entry["slug"], entry)
    return specs


SPECS = bundled()


def test_every_lesson_with_a_calculator_has_at_least_two_templates():
    per_lesson: dict[int, int] = {}
    for path in sorted(CONTENT_DIR.glob("*/practice-*.yaml")):
        number = int(Path(path).name.split("-")[1])
        per_lesson[number] = len(yaml.safe_load(path.read_text())["templates"])
    assert {n for n, count in per_lesson.items() if count >= 2} >= LESSONS_WITH_A_CALCULATOR
    assert sum(per_lesson.values()) >= 34


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slug=st.sampled_from(sorted(SPECS)), seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_any_seed_of_any_bundled_template_draws_a_valid_case_with_a_finite_answer(slug, seed):
    problem = draw_problem(SPECS[slug], seed)  # DrillError if the calculator refuses the draw
    assert math.isfinite(problem.answer) and problem.answer > 0
    assert "{" not in problem.question and "{" not in problem.solution


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_a_problem_pages_question_is_the_solved_problems_question(slug):
    # The page shows draw_question's text until the answer is checked with draw_problem's.
    for seed in range(50):
        drawn = draw_question(SPECS[slug], seed)
        assert (drawn.seed, drawn.question) == (seed, draw_problem(SPECS[slug], seed).question)


def test_a_question_the_calculator_would_refuse_is_refused_before_it_is_shown():
    spec = SPECS["l05-kv-per-conversation"]
    refused = DrillSpec.from_data(
        spec.slug, {**_data(spec), "fixed": {**spec.fixed, "context_tokens": 10**12}}
    )
    with pytest.raises(DrillError, match="context_tokens must be an integer"):
        draw_question(refused, 1)
    with pytest.raises(DrillError, match="context_tokens must be an integer"):
        draw_problem(refused, 1)


def _data(spec: DrillSpec) -> dict:
    for path in sorted(CONTENT_DIR.glob("*/practice-*.yaml")):
        for entry in yaml.safe_load(path.read_text())["templates"]:
            if entry["slug"] == spec.slug:
                return entry
    raise LookupError(spec.slug)


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_each_bundled_template_draws_a_thousand_seeds_inside_its_calculators_ground(slug):
    answers = {draw_problem(SPECS[slug], seed).answer for seed in range(1000)}
    assert all(math.isfinite(value) and value > 0 for value in answers)
    assert len(answers) > 1, "every seed gives the same answer: the draws change nothing"

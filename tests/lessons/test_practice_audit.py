"""Bundled practice templates against the audit of their mistakes, wording and grading: each case
is one draw a student could see, with the number a student would type."""

import pytest

from felab_sim.engine.drills import draw_problem
from tests.lessons.test_practice_bundled import SPECS


def offered(slug: str, seed: int) -> dict[str, float]:
    return {m.slug: m.value for m in draw_problem(SPECS[slug], seed).mistakes}


def test_swapped_prices_put_each_price_on_the_other_tokens():
    problem = draw_problem(SPECS["l09-cost-per-1k"], 1)
    inputs = problem.inputs
    swapped = (
        inputs["input_tokens"] * inputs["output_usd_per_m"]
        + inputs["output_tokens"] * inputs["input_usd_per_m"]
    ) / 1000
    assert offered("l09-cost-per-1k", 1)["prices-swapped"] == pytest.approx(swapped)
    assert problem.grade(swapped).mistake.slug == "prices-swapped"

"""The speculative calculator (lesson 13) reproduces the course's worked examples. No database."""

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from tests.support.calculators import outputs


def test_speculative_reproduces_lesson_13s_formula():
    out = outputs("speculative", acceptance=0.8, draft_tokens=4, draft_cost=0.1)
    assert out["tokens_per_pass"] == pytest.approx(3.36, abs=0.005)
    assert out["speedup"] == pytest.approx(2.40, abs=0.005)
    assert out["break_even_acceptance"] == pytest.approx(0.29, abs=0.005)


# Lesson 13's "k 8 → 0.45" is 0.4448 rounded to two places from above: within 0.006.
@pytest.mark.parametrize(("k", "alpha"), [(2, 0.17), (8, 0.45)])
def test_speculative_break_even_at_other_draft_lengths(k, alpha):
    assert outputs("speculative", draft_tokens=k)["break_even_acceptance"] == pytest.approx(alpha, abs=0.006)


@pytest.mark.parametrize(
    ("alpha", "speedups"),
    [(0.3, (1.16, 1.02, 0.89, 0.79)), (0.7, (1.82, 1.98, 1.91, 1.78)), (0.9, (2.26, 2.93, 3.26, 3.40))],
)
def test_speculative_reproduces_lesson_13s_grid(alpha, speedups):
    got = [outputs("speculative", acceptance=alpha, draft_tokens=k)["speedup"] for k in (2, 4, 6, 8)]
    assert got == pytest.approx(speedups, abs=0.006)


def test_full_acceptance_is_exact_and_a_costly_draft_never_pays():
    assert outputs("speculative", acceptance=1.0, draft_tokens=4)["tokens_per_pass"] == 5
    assert outputs("speculative", draft_cost=1.0)["break_even_acceptance"] == pytest.approx(1.0)


def test_speculative_refuses_a_free_draft():
    with pytest.raises(ParamError) as refused:
        get("speculative").run({"draft_cost": 0, "draft_tokens": 64})
    assert refused.value.param == "draft_cost"
    assert "greater than 0" in refused.value.message


def test_speculative_verify_pass_costs_more_past_lesson_13s_range():
    # Up to k = 9 the pass stays within one weight read; at 64 drafted it computes 65 positions.
    assert outputs("speculative", draft_tokens=8)["verify_pass_steps"] == 1
    assert outputs("speculative", draft_tokens=64)["verify_pass_steps"] == pytest.approx(6.5)
    nearly_free = dict(acceptance=0.99, draft_cost=0.001)
    assert outputs("speculative", **nearly_free, draft_tokens=64)["speedup"] == pytest.approx(7.3, abs=0.05)
    assert (
        outputs("speculative", **nearly_free, draft_tokens=64)["speedup"]
        < outputs("speculative", **nearly_free, draft_tokens=32)["speedup"]
    )

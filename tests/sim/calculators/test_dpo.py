"""The dpo calculator (lessons 16, 18) reproduces the course's worked examples. No database."""

import math

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from tests.support.calculators import outputs


def test_dpo_reproduces_lesson_18s_formula():
    out = outputs("dpo", beta=0.1, margin=1.2)
    assert out["scaled_margin"] == pytest.approx(0.12)
    assert out["loss"] == pytest.approx(0.635, abs=0.0005)
    assert out["fade"] == pytest.approx(0.47, abs=0.005)  # lesson 18's "weight σ(−0.12) = 0.47"
    assert out["loss_at_start"] == pytest.approx(0.693, abs=0.0005)


def test_dpo_gradient_weight_carries_beta_so_a_larger_beta_pulls_harder_at_lesson_18s_pair():
    # d/dθ −log σ(β·m) = −β·σ(−β·m)·dm/dθ: at margin 1.2, 0.1·σ(−0.12) and 0.5·σ(−0.6).
    assert outputs("dpo", beta=0.1, margin=1.2)["gradient_weight"] == pytest.approx(0.047, abs=0.0005)
    assert outputs("dpo", beta=0.5, margin=1.2)["gradient_weight"] == pytest.approx(0.177, abs=0.0005)


def test_dpo_margin_from_the_four_log_probabilities():
    out = outputs(
        "dpo",
        policy_chosen_logp=-10.0,
        reference_chosen_logp=-10.8,
        policy_rejected_logp=-12.4,
        reference_rejected_logp=-12.0,
    )
    assert out["margin"] == pytest.approx(1.2)
    assert out["loss"] == pytest.approx(0.635, abs=0.0005)


def test_bradley_terry_preference_lesson_16s_formula():
    assert outputs("dpo", beta=1, margin=2.5)["preference_probability"] == pytest.approx(0.924, abs=0.0005)


def test_dpo_names_the_missing_log_probability():
    with pytest.raises(ParamError) as error:
        get("dpo").run({"policy_chosen_logp": -1.0})
    assert error.value.param == "reference_chosen_logp"


def test_dpo_loss_stays_finite_for_huge_margins():
    assert math.isfinite(outputs("dpo", beta=100, margin=-1e6)["loss"])
    assert outputs("dpo", beta=100, margin=1e6)["loss"] == 0.0

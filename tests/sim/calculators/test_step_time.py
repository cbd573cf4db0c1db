"""The step-time calculator: one engine step, part by part, from the one step-cost function."""

import pytest

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.params import ParamError
from tests.support.calculators import outputs

DEEPSEEK = {"model": "DeepSeek-V3", "precision": "fp8", "tensor_parallel": 8, "batch": 256}


def test_a_batch_of_256_reads_nearly_every_expert_of_deepseek_v3():
    out = outputs("step-time", **DEEPSEEK)
    # 256 tokens routed to 8 of 256 experts touch 32 × (1 − (1 − 8/256)^256) of each GPU's 32.
    assert out["experts_touched"] == pytest.approx(32 * (1 - (1 - 8 / 256) ** 256))
    assert 80 < out["weights_gb"] < 90  # not one token's 4.6 GB of active weights
    assert out["tok_s_per_user"] < 50  # the bandwidth alone allows at most about 50


def test_one_sequence_reads_only_its_experts():
    one = outputs("step-time", **{**DEEPSEEK, "batch": 1})
    assert one["experts_touched"] == pytest.approx(8 / 8)
    assert one["weights_gb"] < 10


def test_a_prompts_attention_grows_with_the_square_of_its_length():
    def tflop(prompt: int) -> float:
        return outputs("step-time", batch=0, prompt_tokens=prompt)["tflop"]

    # Causal: P (P + 1) / 2 pairs, each 4 × 32 heads × 128 × 32 layers FLOP; the rest is linear in P.
    for prompt in (1000, 30000):
        second_difference = tflop(prompt + 1) - 2 * tflop(prompt) + tflop(prompt - 1)
        assert second_difference * 1e12 == pytest.approx(4 * 32 * 128 * 32, rel=1e-3)
    assert outputs("step-time", batch=0, prompt_tokens=32768)["binds"] == "compute"


def test_a_mixed_step_costs_more_than_its_decodes_alone():
    decodes = outputs("step-time", batch=64)
    mixed = outputs("step-time", batch=64, prompt_tokens=512)
    assert mixed["step_ms"] > decodes["step_ms"]
    assert mixed["sequences_sampled"] == 65


def test_every_part_has_its_formula_with_the_numbers():
    result = CALCULATORS["step-time"].run({**DEEPSEEK})
    assert "E × (1 − (1 − 8/256)^256 tokens)" in result.outputs["weights_gb"].formula
    assert "14 ring steps" in result.outputs["link_ms"].formula
    assert "kernels ×" in result.outputs["fixed_ms"].formula


def test_a_calibration_file_is_read_and_a_bad_one_refused():
    slow = '{"kind": "bandwidth", "op": "read", "gbs": 480.0}\n'
    assert outputs("step-time", calibration=slow)["bandwidth_gbs"] == pytest.approx(480)
    with pytest.raises(ParamError) as refused:
        CALCULATORS["step-time"].run({"calibration": '{"kind": "gemm"}'})
    assert refused.value.param == "calibration"


def test_nothing_to_do_is_refused_naming_the_batch():
    with pytest.raises(ParamError) as refused:
        CALCULATORS["step-time"].run({"batch": "0"})
    assert refused.value.param == "batch"

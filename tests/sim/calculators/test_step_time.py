"""The step-time calculator: one engine step, part by part, from the one step-cost function."""

import re

import pytest

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.core.numbers import format_with_unit
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.serving.validation import validation_points
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
        return outputs("step-time", model="Llama-3.1-8B", batch=0, prompt_tokens=prompt)["tflop"]

    # Causal: P (P + 1) / 2 pairs, each 4 × 32 heads × 128 × 32 layers FLOP; the rest is linear in P.
    for prompt in (1000, 30000):
        second_difference = tflop(prompt + 1) - 2 * tflop(prompt) + tflop(prompt - 1)
        assert second_difference * 1e12 == pytest.approx(4 * 32 * 128 * 32, rel=1e-3)
    assert outputs("step-time", model="Llama-3.1-8B", batch=0, prompt_tokens=32768)["binds"] == "compute"


def test_a_mixed_step_costs_more_than_its_decodes_alone():
    decodes = outputs("step-time", batch=64)
    mixed = outputs("step-time", batch=64, prompt_tokens=512)
    assert mixed["step_ms"] > decodes["step_ms"]
    assert mixed["sequences_sampled"] == 65


def test_every_part_has_its_formula_with_the_numbers():
    result = CALCULATORS["step-time"].run({**DEEPSEEK})
    assert "E × (1 − (1 − 8/256)^256 tokens)" in result.outputs["weights_gb"].formula
    assert "14 ring steps" in result.outputs["link_ms"].formula
    assert "matrix products × 6.93 µs" in result.outputs["fixed_ms"].formula
    assert "small kernels (" in result.outputs["fixed_ms"].formula


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


def largest_step_error(kind: str) -> float:
    return 100 * max(abs(p.error) for p in validation_points() if p.metric.startswith(kind))


def test_the_step_time_carries_its_expected_error_from_the_validation_tables_step_rows():
    decode = CALCULATORS["step-time"].run({"hardware": "h200"})
    assert decode.value("expected_error_pct") == pytest.approx(largest_step_error("decode"))
    assert "scaled from the H200" not in decode.outputs["expected_error_pct"].formula
    shown = decode.outputs["expected_error_pct"].text()
    assert f"(±{shown} expected)" in decode.outputs["step_ms"].formula
    # A speed is tokens ÷ the step: ±s on the step is −s ÷ (1 + s) to +s ÷ (1 − s) on it.
    s = decode.value("expected_error_pct") / 100
    low, high = (format_with_unit(round(100 * share, 1), "%") for share in (s / (1 + s), s / (1 - s)))
    for speed in ("tok_s", "tok_s_per_user"):
        assert f"(−{low} / +{high} expected)" in decode.outputs[speed].formula, speed
    prefill = CALCULATORS["step-time"].run({"hardware": "h100-pcie", "batch": "0", "prompt_tokens": "512"})
    assert prefill.value("expected_error_pct") == pytest.approx(largest_step_error("prefill"))
    assert "scaled from the H200" in prefill.outputs["expected_error_pct"].formula
    # Published serving runs were measured on these: no "no run or step was measured" for them.
    for gpu in ("h100-sxm", "b200", "mi300x"):
        measured = CALCULATORS["step-time"].run({"hardware": gpu})
        assert "scaled from the H200" not in measured.outputs["expected_error_pct"].formula, gpu


def test_mlas_kv_is_not_divided_among_the_gpus_in_its_formula():
    # DeepSeek-V3's latent cache is whole on every GPU of its tensor-parallel group.
    mla = CALCULATORS["step-time"].run({"model": "DeepSeek-V3", "hardware": "h200", "precision": "fp8",
                                        "tensor_parallel": "8"})  # fmt: skip
    assert "÷ 8 GPUs" not in mla.outputs["kv_gb"].formula
    assert "whole on every GPU" in mla.outputs["kv_gb"].formula
    dense = CALCULATORS["step-time"].run(
        {"model": "Llama-3.1-70B", "hardware": "h200", "tensor_parallel": "8"}
    )
    assert dense.outputs["kv_gb"].formula.endswith("× the KV bytes of a token ÷ 8 GPUs")


def test_mlas_formula_prices_decodes_over_the_latent_and_the_prompt_over_expanded_heads():
    run = CALCULATORS["step-time"].run({"model": "DeepSeek-V3", "hardware": "h200", "precision": "fp8",
                                        "tensor_parallel": "8", "batch": "64", "context_tokens": "999",
                                        "prompt_tokens": "1000"})  # fmt: skip
    formula = run.outputs["tflop"].formula
    assert "2 × (512 + 64) + 2 × 512 a head (decode" in formula and "2,176" in formula
    assert "2 × (128 + 64 + 128) a head (prefill" in formula and "640" in formula
    # The figure is what the formula says: a thousand more tokens of context for 64 decodes add
    # 64 × 1,000 pairs at 2,176 FLOP a head, 16 heads a GPU, 61 layers.
    shorter, longer = (
        outputs("step-time", **{**DEEPSEEK, "hardware": "h200", "batch": 64, "context_tokens": context})[
            "tflop"
        ]
        for context in (999, 1999)
    )
    assert longer - shorter == pytest.approx(2176 * 64 * 1000 * 16 * 61 / 1e12)


def test_the_compute_formula_gives_the_four_bit_products_rate_and_the_unpacking_beside_them():
    settings = {"model": "gpt-oss-120b", "hardware": "h100-sxm", "precision": "mxfp4", "tensor_parallel": 4}
    decode = CALCULATORS["step-time"].run({**settings, "batch": 16, "context_tokens": 1400})
    formula = decode.outputs["compute_ms"].formula
    assert (
        "a 4-bit expert product at 0.2 × a BF16 product's rate, a factor fitted on published runs' TTFT"
        in formula
    )
    # Unpacking 2.9 ms beside 0.22 ms of products: 2.6 ms of it counts.
    assert "+ 2.6 ms: unpacking" in formula and "takes 2.9 ms" in formula
    assert "beside the 0.22 ms of those weights' products" in formula
    prompt = CALCULATORS["step-time"].run(
        {**settings, "batch": 1, "context_tokens": 0, "prompt_tokens": 8192}
    )
    assert "+ 0 ms: unpacking" in prompt.outputs["compute_ms"].formula  # the products outlast it
    bf16 = CALCULATORS["step-time"].run(
        {**settings, "precision": "bf16", "batch": 16, "context_tokens": 1400}
    )
    assert "4-bit" not in bf16.outputs["compute_ms"].formula


def test_the_compute_formulas_terms_add_up_to_its_figure():
    # Each term is its own seconds: the other products, the grouped expert products at their
    # rate, what unpacking adds and attention; read back from the text, they make the figure.
    number = r"([\d,]+(?:\.\d+)?)"
    for gpu, prompt in (("b200", 8192), ("h100-sxm", 8192), ("h100-sxm", 0)):
        settings = {"model": "gpt-oss-120b", "hardware": gpu, "precision": "mxfp4", "tensor_parallel": 4}
        load = (
            {"batch": 1, "context_tokens": 0, "prompt_tokens": prompt}
            if prompt
            else {"batch": 16, "context_tokens": 1400}
        )
        output = CALCULATORS["step-time"].run({**settings, **load}).outputs["compute_ms"]
        formula = output.formula.replace(",", "")
        terms = [
            float(flops) / float(rate) * 1000
            for flops, rate in re.findall(
                r"([\d.]+) TFLOP (?:in the other linear products|in the grouped expert products|attention) ÷ ([\d.]+) TFLOP/s",
                formula,
            )
        ]
        assert len(terms) == 3, formula
        unpacking = re.search(r"\+ " + number + r" ms: unpacking", formula)
        total = sum(terms) + (float(unpacking.group(1)) if unpacking else 0.0)
        assert total == pytest.approx(output.value, rel=0.02), formula

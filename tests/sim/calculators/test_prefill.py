"""The prefill calculator (lesson 01) reproduces the course's worked examples. No database."""

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from tests.support.calculators import outputs


@pytest.mark.parametrize(("prompt", "ttft_ms"), [(8000, 3215.0), (4000, 1615.0), (12, 19.8)])
def test_prefill_reproduces_lesson_01s_formula(prompt, ttft_ms):
    out = outputs("prefill", prompt_tokens=prompt)
    assert out["ttft_ms"] == pytest.approx(ttft_ms)
    assert out["uncached_tokens"] == prompt


def test_prefill_skips_cached_tokens():
    assert outputs("prefill", prompt_tokens=3050, cached_tokens=3008)["ttft_ms"] == pytest.approx(31.8)


def test_prefill_refuses_more_cached_tokens_than_the_prompt_has():
    with pytest.raises(ParamError) as error:
        get("prefill").run({"prompt_tokens": 10, "cached_tokens": 11})
    assert error.value.param == "cached_tokens"


def test_a_model_on_a_gpu_prices_its_prompt_from_physics():
    physics = outputs("prefill", model="Llama-3.1-8B", hardware="h200", prompt_tokens=2048)
    step = outputs("step-time", model="Llama-3.1-8B", hardware="h200", batch=0, prompt_tokens=2048)
    assert physics["prefill_ms"] == pytest.approx(step["step_ms"])
    assert physics["ttft_ms"] == pytest.approx(15 + step["step_ms"])
    # Attention's pairs grow with the square of the prompt: 16× the tokens cost more than 16× the time.
    long = outputs("prefill", model="Llama-3.1-8B", hardware="h200", prompt_tokens=32768)
    assert long["prefill_ms"] > 16 * physics["prefill_ms"]


def test_cached_tokens_cost_no_prefill_from_physics_but_are_attended_to():
    cold = outputs("prefill", model="Llama-3.1-8B", prompt_tokens=8000)
    warm = outputs("prefill", model="Llama-3.1-8B", prompt_tokens=8000, cached_tokens=6000)
    fresh = outputs("prefill", model="Llama-3.1-8B", prompt_tokens=2000)
    assert fresh["prefill_ms"] < warm["prefill_ms"] < cold["prefill_ms"]

"""The prefill calculator (lesson 01) reproduces the course's worked examples. No database."""

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.params import ParamError
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

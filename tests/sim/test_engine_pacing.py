"""The continuous-batching pacing of the practice server (felab_sim/engine/serving/pacing.py):
the engine's step prices, and its settings refused by name. No database, no server; the real
server paced by it is tested in tests/practice/test_continuous_engine.py."""

from __future__ import annotations

import pytest

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.serving.pacing import EnginePacing
from felab_sim.engine.serving.step_time import StepLoad
from felab_sim.engine.sweep.sweep_params import ServerParams


def test_the_pacing_is_the_engines_step_price():
    pacing = EnginePacing()
    pricer = pacing._pricer
    load = StepLoad(16, 16, 16 * 600, 16 * 600, 16 * 600.0, 16 * 600.0)
    assert pacing.decode_step_ms(16, 16 * 600) == pytest.approx(1000 * pricer.step_seconds(load, 16))
    # A step of 32 costs little more than a step of 1 (one weight read serves them all), unlike
    # the fixed-slot model's 6% a user.
    assert pacing.decode_step_ms(32, 32 * 600) < 1.3 * pacing.decode_step_ms(1, 600)
    fixed = ServerParams()
    assert fixed.decode_step_ms(8) > 1.3 * fixed.decode_step_ms(1)
    # A 5,000-token prompt is three chunks of the 2,048-token budget, each attending to the last.
    assert pacing.prefill_ms(5000) > pacing.prefill_ms(2048) + pacing.prefill_ms(2952)
    assert pacing.slots == 256 and pacing.as_flat()["engine"] == "continuous"


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"model": "GPT-5"}, "model"),
        ({"hardware": "dgx-spark"}, "hardware"),  # no published dense BF16 peak
        ({"hardware": "tpu"}, "hardware"),
        ({"max_num_seqs": 0}, "max_num_seqs"),
        ({"max_num_batched_tokens": True}, "max_num_batched_tokens"),
    ],
)
def test_bad_engine_settings_name_themselves(kwargs, param):
    with pytest.raises(ParamError) as refused:
        EnginePacing(**kwargs)
    assert refused.value.param == param

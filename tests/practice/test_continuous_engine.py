"""``practice_server --engine continuous``: the real practice server paced by the
continuous-batching engine's step times (felab_sim/engine/serving/pacing.py), so lesson 03's
closed-loop sweep against it keeps rising past the fixed-slot server's knee."""

from __future__ import annotations

import warnings

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.serving.pacing import EnginePacing
from felab_sim.engine.sweep.loadgen import run_real_sweep
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import ServerParams, SweepParams
from tests.practice.conftest import practice_server_command, serving


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--engine", "continuous", "--slots", "4"], "--slots"),
        (["--max-num-seqs", "64"], "--max-num-seqs"),
        (["--engine", "continuous", "--max-num-seqs", "0"], "--max-num-seqs"),
        (["--engine", "continuous", "--hardware", "dgx-spark"], "--hardware"),
    ],
)
def test_the_command_refuses_flags_of_the_other_engine_by_name(flags, named):
    with pytest.raises(CommandError, match=f"^{named}"):
        call_command("practice_server", *flags)


# The server adds up every stream's lateness: at 32 in flight a 20 ms hiccup of the event loop
# counts 0.64 s. The claims below hold with about twice their margin on a quiet machine (902
# against the 454 tok/s asked at 32), which absorbs far more than this.
ENGINE_STALLS_JUDGED_THROUGH_S = 1.0


def test_a_closed_loop_sweep_against_it_rises_past_the_fixed_slots_knee():
    """A stall (other jobs on the cores) only ever slows a level. So the fixed server is judged on
    the side no stall can reach, its 32 in flight against its rules' ideal at 8 slots; the engine,
    whose claims a stall could break, is judged on a sweep it ran on schedule, up to three tries
    (test_loadgen.py judges its sweeps the same way)."""
    sweep = SweepParams(levels=(1, 8, 32), max_tokens=32, slo_ms=60_000)
    with serving(ServerParams(), app=None) as fixed:
        slots = {level.conc: level.agg_tok_s for level in run_real_sweep(fixed.api, sweep).levels}
    fixed_rules = {level.conc: level.agg_tok_s for level in run_sweep(sweep).levels}
    # The fixed server stops at its 8 slots, whatever the machine.
    assert slots[32] < 1.3 * fixed_rules[8]
    from felab_sim.practice import PracticeApp

    with serving(ServerParams(), app=PracticeApp(EnginePacing())) as engine:
        assert engine.health()["params"]["engine"] == "continuous"
        for _attempt in range(3):
            late_before = engine.app.late_s
            measured = {level.conc: level.agg_tok_s for level in run_real_sweep(engine.api, sweep).levels}
            if engine.app.late_s - late_before <= ENGINE_STALLS_JUDGED_THROUGH_S:
                break
        else:
            warnings.warn(
                "every engine sweep fell behind its schedule: judged on the fixed server only", stacklevel=1
            )
            return
    # The engine's step barely grows, so 32 in flight give several times 8's throughput (about
    # 3.6 times by its step prices; 902 against 273 tok/s measured on a quiet machine, the fixed
    # server 304 at 32).
    assert measured[8] > 4 * measured[1]
    assert measured[32] > 1.5 * measured[8]
    assert measured[32] > 1.5 * fixed_rules[32]


def test_the_command_serves_the_engine():
    options = ("--engine", "continuous", "--max-num-seqs", "64", "--hardware", "h100-sxm")
    with practice_server_command(*options) as server:
        assert server.health["slots"] == 64
        assert server.health["params"] == {
            "engine": "continuous",
            "model": "Llama-3.1-8B",
            "hardware": "h100-sxm",
            "max_num_seqs": 64,
            "max_num_batched_tokens": 2048,
        }
    assert server.returncode == 0, server.output
    assert "engine=continuous" in server.output and "Traceback" not in server.output

"""felab's stored runs of the three measured traces (anchor_runs.json's ``felab`` sections) are
the engine's: each is simulated again here, as the engine page would, and compared field by field.

A 300-request trace costs more CPU than a web request's 250 ms budget, so the web reads these
stored runs when its settings are exactly a measured run's (felab_sim/live.py, the
continuous-batching calculator). After an engine change this test fails until
``bench/bench_engine.py --export-felab`` writes them again."""

from __future__ import annotations

import json

import pytest

from felab_sim.engine.calculators import get
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.serving.anchors import anchor_runs
from felab_sim.engine.serving.engine_params import (
    anchor_felab,
    anchor_values,
    engine_inputs,
)
from felab_sim.engine.serving.simulate import EngineSettings
from felab_sim.engine.sweep.limits import ENGINE_WEB_LIMITS
from felab_sim.live import engine_outcomes

LIMITS = ENGINE_WEB_LIMITS


@pytest.fixture(scope="module")
def simulated():
    """Each run's felab section as the engine computes it now, through JSON as the file keeps it."""
    return {
        run.spec.folder: json.loads(json.dumps(anchor_felab(run, LIMITS.sample_interval, LIMITS.sweep_work)))
        for run in anchor_runs()
    }


@pytest.mark.parametrize("run", anchor_runs(), ids=lambda run: run.spec.folder)
def test_the_stored_run_is_the_engines(run, simulated):
    fresh = simulated[run.spec.folder]
    assert run.felab is not None
    assert run.felab["inputs"] == fresh["inputs"]  # presets, every setting, the web's caps
    assert run.felab["result"]["summary"] == fresh["result"]["summary"]
    assert run.felab["result"] == fresh["result"]  # every request, sample and counter
    assert run.felab["sweep"] == fresh["sweep"]
    assert len(run.felab_result().requests) == len(run.trace) == 300


@pytest.mark.parametrize("run", anchor_runs(), ids=lambda run: run.spec.folder)
def test_the_page_reads_the_stored_run_for_a_measured_runs_settings(run):
    values = anchor_values(run)
    outcome = engine_outcomes(tuple(values.items()), "")
    assert outcome.anchor is run
    assert outcome.result is run.felab_result()  # read, not simulated again
    assert outcome.inputs == engine_inputs(values)


def test_a_stored_run_is_read_only_for_its_own_settings():
    run = anchor_runs()[0]
    assert run.felab_result_for(run.settings) is run.felab_result()
    assert run.felab_result_for(EngineSettings(max_num_seqs=255)) is None


def test_the_calculators_trace_is_the_stored_run_and_other_settings_are_capped():
    calculator = get("continuous-batching")
    stored = anchor_runs()[0].felab_result()
    out = calculator.run({"trace": True}).outputs
    assert out["tpot_mean_ms"].value == stored.summary["tpot_mean_ms"]
    assert out["preemptions"].value == stored.preemptions
    with pytest.raises(ParamError) as refused:
        calculator.run({"trace": True, "max_num_seqs": 64})
    assert refused.value.param == "trace"
    assert f"{LIMITS.run_work:,.0f} units" in refused.value.message
    assert "manage.py engine --trace" in refused.value.message

"""The published serving runs felab is validated against, and the split a fit may see."""

import csv
import io

import pytest

from felab_sim.engine.hardware.hardware import hardware_preset
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving import serving_runs
from felab_sim.engine.serving.serving_runs import (
    FIT,
    PREDICT,
    ServingRunsError,
    parse_runs,
    parse_split,
    runs,
)


def test_the_files_hold_at_least_forty_runs_with_unique_ids():
    ids = [run.run_id for run in runs()]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids)


def test_every_run_says_where_its_numbers_and_its_launch_came_from():
    for run in runs():
        assert "https://" in run.source, run.run_id
        assert "https://" in run.launch, run.run_id
        assert run.date_read, run.run_id


def test_no_run_comes_from_the_sources_kept_for_an_independent_check():
    # aiconfigurator's accuracy-tracking points and LLMServingSim's runs stay out.
    for run in runs():
        where = f"{run.source} {run.launch}".lower()
        for kept_back in ("aiconfigurator", "llmservingsim", "casys-kaist"):
            assert kept_back not in where, run.run_id


def test_every_run_is_either_fitted_on_or_predicted():
    assert len(runs(FIT)) + len(runs(PREDICT)) == len(runs())
    assert not {run.run_id for run in runs(FIT)} & {run.run_id for run in runs(PREDICT)}


def test_a_fit_sees_at_most_a_third_of_the_runs():
    assert 3 * len(runs(FIT)) <= len(runs())


def test_the_fitted_runs_span_engines_gpus_and_both_model_kinds():
    fitted = runs(FIT)
    assert len({run.engine for run in fitted}) >= 2
    assert len({run.gpu for run in fitted}) >= 2
    assert {run.model_kind for run in fitted} == {"dense", "MoE"}


def test_each_fitted_group_rests_on_several_runs_never_one():
    groups: dict[tuple[str, str, str], int] = {}
    for run in runs(FIT):
        key = (run.engine, run.gpu, run.model_kind)
        groups[key] = groups.get(key, 0) + 1
    assert min(groups.values()) >= 2, groups


def test_every_fitted_group_is_also_predicted_elsewhere():
    predicted = {(run.engine, run.gpu, run.model) for run in runs(PREDICT)}
    for run in runs(FIT):
        assert (run.engine, run.gpu, run.model) in predicted, run.run_id


def test_gpus_hold_the_parallelism_each_run_states():
    for run in runs():
        assert run.gpus == run.tp * run.dp, run.run_id
        assert run.gpus % run.ep == 0, run.run_id


def test_the_measured_numbers_are_in_the_units_their_columns_name():
    for run in runs():
        assert 0 < run.tpot_mean_ms < 1000, run.run_id
        assert 0 < run.ttft_mean_ms < 600_000, run.run_id
        # concurrency streams, each a token every TPOT, bound what the whole server writes: a
        # column in seconds, per server instead of per GPU, or counting input tokens breaks it.
        streams_tok_s = run.concurrency * 1000 / run.tpot_mean_ms
        assert 0 < run.output_tok_s_per_gpu * run.gpus <= 1.05 * streams_tok_s, run.run_id


def test_total_throughput_counts_input_and_output_tokens():
    with_total = [run for run in runs() if run.total_tok_s_per_gpu is not None]
    assert with_total
    for run in with_total:
        share = run.total_tok_s_per_gpu / run.output_tok_s_per_gpu
        assert share == pytest.approx((run.input_len + run.output_len) / run.output_len, rel=0.05), run.run_id


def test_the_presets_a_run_names_exist():
    for run in runs():
        if run.felab_model:
            preset(run.felab_model)
        if run.felab_gpu:
            hardware_preset(run.felab_gpu)


def test_a_group_that_is_neither_fit_nor_predict_is_refused():
    with pytest.raises(ValueError, match="'train'"):
        runs("train")


def _runs_text_with(first_row_changes: dict[str, str], repeat_first: bool = False) -> str:
    """The real runs file with its first run's cells changed (and, if asked, that run twice)."""
    rows = list(csv.DictReader(serving_runs.RUNS_FILE.read_text(encoding="utf-8").splitlines()))
    rows[0] |= first_row_changes
    if repeat_first:
        rows.insert(1, dict(rows[0]))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def test_the_real_file_rewritten_unchanged_parses_to_the_same_runs():
    assert parse_runs(_runs_text_with({})) == runs()


def test_a_bad_cell_is_refused_naming_its_line_and_column():
    with pytest.raises(ServingRunsError, match=r"line 2, concurrency 'many'"):
        parse_runs(_runs_text_with({"concurrency": "many"}))


def test_a_throughput_of_zero_is_refused():
    with pytest.raises(ServingRunsError, match=r"line 2, output_tok_s_per_gpu '0': 0.0 is not above zero"):
        parse_runs(_runs_text_with({"output_tok_s_per_gpu": "0"}))


def test_a_run_whose_gpus_cannot_hold_its_parallelism_is_refused():
    first = runs()[0]
    with pytest.raises(ServingRunsError, match=r"line 2: .* GPUs do not hold TP"):
        parse_runs(_runs_text_with({"gpus": str(2 * first.tp * first.dp)}))


def test_a_run_id_twice_is_refused():
    with pytest.raises(ServingRunsError, match=r"line 3: run_id .* appears twice"):
        parse_runs(_runs_text_with({}, repeat_first=True))


def test_a_split_that_leaves_a_run_out_is_refused():
    ids = [run.run_id for run in runs()]
    text = "run_id,group\n" + "\n".join(f"{run_id},predict" for run_id in ids[1:])
    with pytest.raises(ServingRunsError, match=f"no group for {ids[0]}"):
        parse_split(text, ids)


def test_a_split_naming_a_run_that_does_not_exist_is_refused():
    ids = [run.run_id for run in runs()]
    text = "run_id,group\n" + "\n".join(f"{run_id},predict" for run_id in [*ids, "no-such-run"])
    with pytest.raises(ServingRunsError, match="no run 'no-such-run'"):
        parse_split(text, ids)

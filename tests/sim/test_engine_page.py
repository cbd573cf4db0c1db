"""/sim/engine/ and /sim/engine.json: thin adapters over the continuous-batching engine.

The engine's own numbers are tested in test_engine_params.py and test_batching_engine.py; here
what the web adds: the form from the declarations, 400s naming the field, the web's caps, the
JSON shape, htmx's partial and the shareable address."""

from __future__ import annotations

import fcntl
import html
import json
import re

import pytest

from felab_sim.engine.core.numbers import format_with_unit
from felab_sim.engine.models.model_presets import preset
from felab_sim.engine.serving.engine_params import ENGINE_PARAMS
from felab_sim.engine.serving.serving_validation import nearest_rank
from felab_sim.engine.serving.validation import validation_points
from felab_sim.live import engine_outcomes
from tests.support.engine_runs import ON_A_4090

pytestmark = pytest.mark.django_db

URL = "/sim/engine/"
JSON_URL = "/sim/engine.json"
SMALL = {**ON_A_4090, "requests": "12", "output_tokens": "16"}


def page(client, query: dict | None = None, **headers):
    response = client.get(URL, {**ON_A_4090, **(query or {})}, headers=headers)
    return response, response.content.decode()


def test_the_default_page_names_the_binding_limit_and_draws_four_charts(client):
    response, body = page(client)
    assert response.status_code == 200
    assert 'data-limit="blocks"' in body and "KV blocks bind" in body
    for chart in ("engine-timeseries", "engine-distribution", "engine-sweep", "engine-planner-chart"):
        assert f'data-figure="{chart}"' in body and "<svg" in body
    assert "lesson 03&#x27;s practice server" in body
    assert "41,008 tokens" in body  # the 4090's pool, as bench_engine.py checks it against vLLM's


def test_every_declared_setting_is_a_field(client):
    _, body = page(client)
    for param in ENGINE_PARAMS:
        assert f'name="{param.name}"' in body, param.name
    assert '<textarea name="model_config"' in body


def test_the_address_holds_the_settings_and_changes_the_sentence(client):
    _, body = page(client, {"max_num_seqs": "8"})
    assert 'data-limit="seqs"' in body and "max_num_seqs = 8" in body
    assert 'name="max_num_seqs" value="8"' in body
    assert re.search(r'engine\.json\?[^"]*max_num_seqs=8', body)


def test_htmx_gets_only_the_results_partial(client):
    response, body = page(client, {"max_num_seqs": "8"}, HX_Request="true")
    assert body.lstrip().startswith('<section id="engine-results"')
    assert "<form" not in body and "max_num_seqs = 8" in body
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"max_num_seqs": "0"}, "max_num_seqs", "Max num seqs must be an integer at least 1"),
        ({"gpu_memory_utilization": "1.5"}, "gpu_memory_utilization", "at most 1 (got 1.5)"),
        ({"hardware": "dgx-spark"}, "peak_tflops", "Peak compute must be typed in"),
        ({"hardware": "custom", "memory_gb": "80"}, "bandwidth_gbs", "Memory bandwidth must be typed in"),
        ({"expert_parallel": "on"}, "expert_parallel", "needs a mixture-of-experts model"),
        ({"tensor_parallel": "3"}, "tensor_parallel", "split the KV heads evenly"),
        ({"input_tokens": "100000"}, "input_tokens", "do not fit the 41008-token KV pool"),
        ({"model": "config"}, "model_config", "Config.json is empty"),
        ({"requests": "101"}, "requests", "at most 100 in a web request"),
        # A run over the web's work cap is the setting's that forces the steps, not the requests'.
        ({"max_num_seqs": "1"}, "max_num_seqs", "Max num seqs: at most 1 request decodes in a step"),
        ({"max_num_batched_tokens": "1"}, "max_num_batched_tokens", "raise max_num_batched_tokens"),
        ({"output_tokens": "2000"}, "requests", "use fewer requests or shorter prompts and outputs"),
        # Weights larger than the whole GPU: no utilization helps, so the model is named with what does.
        ({"model": "Llama-3.1-70B"}, "model", "no GPU memory utilization can make room"),
        ({"model": "Llama-3.1-70B", "hardware": "h100-sxm"}, "model", "tensor_parallel 2 (70.6 GB"),
        # Weights that fit the GPU but not the share allowed: the utilization, and the value that fits.
        ({"gpu_memory_utilization": "0.3"}, "gpu_memory_utilization", "raise it to at least 0.69"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client, query, field, message):
    response, body = page(client, query)
    assert response.status_code == 400
    assert message in body
    assert f'name="{field}"' in body and 'aria-invalid="true"' in body
    as_json = client.get(JSON_URL, {**ON_A_4090, **query})
    assert as_json.status_code == 400
    assert as_json.json()["error"]["param"] == field


def test_a_value_given_twice_or_an_unknown_name_is_refused(client):
    assert client.get(f"{JSON_URL}?max_num_seqs=8&max_num_seqs=9").json()["error"]["param"] == "max_num_seqs"
    response = client.get(JSON_URL, {"colour": "red"})
    assert (
        response.status_code == 400 and "not a setting of the engine" in response.json()["error"]["message"]
    )


def test_a_run_over_the_web_budget_is_refused_naming_the_setting_that_forces_it(client):
    # 100 requests one at a time: every token a step of its own, over the run's work cap.
    query = {"max_num_seqs": "1"}
    response, body = page(client, query)
    assert response.status_code == 400
    assert "units of work" in body and "manage.py engine" in body
    assert client.get(JSON_URL, {**ON_A_4090, **query}).json()["error"]["param"] == "max_num_seqs"
    # Requests too long even all at once: the workload's size, not the engine's settings.
    for query in ({"output_tokens": "1000"}, {"max_num_seqs": "1", "output_tokens": "1000"}):
        assert client.get(JSON_URL, {**ON_A_4090, **query}).json()["error"]["param"] == "requests"


def test_json_has_the_commands_shape_and_both_sweeps(client):
    data = client.get(JSON_URL, SMALL).json()
    assert set(data["summary"]) == {
        "ttft_mean_ms", "tpot_mean_ms", "latency_mean_ms", "total_s", "output_tok_s", "kv_tokens", "max_running",
    }  # fmt: skip
    assert len(data["requests"]) == 12
    assert set(data["timeseries"][0]) == {"t", "running", "waiting", "kv_pct"}
    assert data["binding"]["limit"] in {"blocks", "seqs", "budget", "bandwidth", "compute"}
    assert data["sweep"]["levels"] == [1, 2, 4, 8, 16, 32]
    assert [level["conc"] for level in data["sweep"]["engine"]] == [1, 2, 4, 8, 16, 32]
    assert data["sweep"]["practice_server"][3]["agg_tok_s"] == pytest.approx(275.1, rel=0.02)


def test_a_pasted_config_runs_as_its_preset(client):
    config = json.dumps(dict(preset("Llama-3.1-8B").config))
    pasted = client.get(JSON_URL, {**SMALL, "model": "config", "model_config": config}).json()
    assert pasted["summary"] == client.get(JSON_URL, SMALL).json()["summary"]


def test_a_run_is_simulated_once_for_the_same_settings(client):
    engine_outcomes.cache_clear()
    client.get(JSON_URL, SMALL)
    client.get(URL, SMALL)
    info = engine_outcomes.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_a_page_reads_the_validation_tables_expected_errors_without_rerunning_its_set_up(client, monkeypatch):
    from felab_sim.engine.serving import serving_validation

    client.get(URL, SMALL)
    set_up = []
    real = serving_validation.setup
    monkeypatch.setattr(serving_validation, "setup", lambda run: set_up.append(run.run_id) or real(run))
    assert client.get(URL, {**SMALL, "requests": "11"}).status_code == 200
    assert client.get(JSON_URL, {**SMALL, "requests": "13"}).status_code == 200
    assert set_up == []


def test_a_refusal_over_the_budget_is_kept_too(client):
    engine_outcomes.cache_clear()
    query = {"max_num_seqs": "1", "output_tokens": "1000"}
    assert client.get(JSON_URL, {**ON_A_4090, **query}).status_code == 400
    assert client.get(URL, {**ON_A_4090, **query}).status_code == 400
    info = engine_outcomes.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_the_simulator_page_and_the_nav_link_here(client):
    body = client.get("/sim/").content.decode()
    assert f'href="{URL}"' in body


def test_the_page_says_where_the_step_times_come_from(client):
    _, measured = page(client, {**SMALL, "hardware": "h200"})
    assert "measured on an NVIDIA H200 SXM 141GB" in measured
    _, derived = page(client, SMALL)
    assert "not measured: the default, the ratios to the spec sheet measured on the NVIDIA H200" in derived
    assert "(this GPU was not measured)" in derived


def test_a_run_too_short_for_a_sample_still_draws(client):
    # One request of one output token ends before the first 0.1 s sample, and has no TPOT.
    query = {"requests": "1", "output_tokens": "1"}
    response, body = page(client, query)
    assert response.status_code == 200 and body.count('class="chart-wide"') == 4
    assert client.get(JSON_URL, {**ON_A_4090, **query}).json()["timeseries"] == []


@pytest.mark.parametrize("url", [URL, JSON_URL])
def test_a_run_waits_for_a_simulation_permit_then_is_told_to_retry(client, settings, tmp_path, url):
    settings.SIM_PERMITS, settings.SIM_PERMIT_WAIT_S, settings.SIM_PERMITS_DIR = 1, 0.2, tmp_path
    handle = (tmp_path / "permit-0.lock").open("a")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another gunicorn worker holds it
    try:
        busy = client.get(url, SMALL)
        assert busy.status_code == 503 and busy["Retry-After"] == "1"
        assert "busy with other large runs" in busy.content.decode()
    finally:
        handle.close()
    assert client.get(url, SMALL).status_code == 200


def test_one_output_token_shows_none_with_why_where_a_figure_does_not_exist(client):
    query = {"requests": "12", "output_tokens": "1"}
    _, body = page(client, query)
    for key, why in (("tpot_mean_ms", "no request has a second token"), ("max_running", "no request stayed")):
        row = re.search(rf'<tr id="summary-{key}">(.*?)</tr>', body, re.S).group(1)
        assert re.search(rf'data-key="{key}">none</span>', row), row
        assert f"None: {why}" in row
    summary = client.get(JSON_URL, {**ON_A_4090, **query}).json()["summary"]
    assert summary["tpot_mean_ms"] is None and summary["max_running"] is None


def test_a_refusal_sits_under_its_field_and_in_a_summary_at_the_top_of_the_form_linking_to_it(client):
    _, body = page(client, {"max_num_seqs": "1"})
    form = body[body.index("<form") : body.index("</form>")]
    summary = form[form.index('id="engine-form-errors"') : form.index("<fieldset")]
    assert 'href="#id_max_num_seqs"' in summary and "Max num seqs: at most 1 request" in summary
    slot = re.search(r'id="id_max_num_seqs-errors">(.*?)</div>', form, re.S).group(1)
    assert "Max num seqs: at most 1 request" in slot
    assert re.search(r'id="id_model-errors"></div>', form)  # the others hold nothing


def test_htmx_redraws_the_fields_messages_and_the_summary_out_of_band(client):
    _, body = page(client, {"model": "Llama-3.1-70B"}, HX_Request="true")
    slot = re.search(r'<div class="field-errors" id="id_model-errors" hx-swap-oob="true">(.*?)</div>', body)
    assert slot and "no GPU memory utilization can make room" in slot.group(1)
    assert re.search(r'id="id_gpu_memory_utilization-errors" hx-swap-oob="true"></div>', body)
    assert 'id="engine-form-errors" class="form-error-summary" hx-swap-oob="true"' in body
    # Fixed, the messages are cleared and the summary hidden.
    _, fixed = page(client, SMALL, HX_Request="true")
    assert re.search(r'id="id_model-errors" hx-swap-oob="true"></div>', fixed)
    assert 'id="engine-form-errors" class="form-error-summary" hidden hx-swap-oob="true"' in fixed


def test_the_page_shows_its_predictions_against_every_measurement(client):
    _, body = page(client, SMALL)
    table = body[body.index('class="calc-table engine-validation"') :]
    table = table[: table.index("</table>")]
    assert "Points a number was fitted on" in table and "Points predicted (nothing fitted on them)" in table
    assert table.index("vLLM on 1 × NVIDIA GeForce RTX 4090, Llama-3.1-8B") < table.index("Points predicted")
    assert table.index("Points predicted") < table.index("decode, 1 × 1,024")
    assert table.count("<tr") == 1 + 2 + 4 + 12 + 10  # column heads, groups, their sources, the points
    assert "missed" in table  # a miss is shown as one


def test_deepseek_v3_in_fp8_on_eight_h200s_runs_and_at_bf16_does_not_fit(client):
    query = {
        "model": "DeepSeek-V3", "hardware": "h200", "tensor_parallel": "8", "requests": "4",
        "concurrency": "4", "workload": "concurrency", "input_tokens": "64", "output_tokens": "4",
    }  # fmt: skip
    response = client.get(JSON_URL, {**ON_A_4090, **query, "precision": "fp8"})
    assert response.status_code == 200
    assert response.json()["pool"]["weight_bytes"] == pytest.approx(84.8e9, rel=1e-3)
    refused = client.get(JSON_URL, {**ON_A_4090, **query})
    assert refused.status_code == 400 and "169.6 GB a GPU" in refused.json()["error"]["message"]


def test_the_page_shows_ttft_and_tpot_percentiles_under_their_means_as_the_json_has_them(client):
    _, body = page(client, SMALL)
    percentiles = client.get(JSON_URL, SMALL).json()["percentiles"]
    for name, unit, scale in (("ttft", "s", 0.001), ("tpot", "ms", 1.0)):
        row = re.search(rf'<tr id="summary-{name}_percentiles" class="tail">(.*?)</tr>', body, re.S).group(1)
        assert "p50 · p90 · p99" in row
        shown = [format_with_unit(percentiles[f"{name}_p{p}_ms"] * scale, unit) for p in (50, 90, 99)]
        assert " · ".join(shown) in re.sub(r"<[^>]+>", "", row), row
    assert body.index('id="summary-ttft_mean_ms"') < body.index('id="summary-ttft_percentiles"')


def largest_error(metric: str, model_prefix: str) -> float:
    """The largest error of the validation table's rows of one metric on runs of one model family."""
    return max(
        abs(point.error)
        for point in validation_points()
        if point.metric == metric and point.what.endswith(model_prefix)
    )


def predicted_serving_errors(kind: str, moe: bool) -> list[float]:
    """|felab ÷ measured − 1| of the published serving runs felab predicted, of one kind."""
    from felab_sim.engine.serving.serving_validation import PREDICT, serving_points

    return [abs(p.error) for p in serving_points() if p.kind == kind and p.moe == moe and p.group == PREDICT]


def test_every_figure_carries_its_expected_error_from_the_validation_table_and_an_unmeasured_gpu_says_so(
    client,
):
    query = {**SMALL, "hardware": "h100-pcie"}  # no run or step was measured on the PCIe card
    _, body = page(client, query)
    data = client.get(JSON_URL, {**ON_A_4090, **query}).json()["expected_error"]
    # The dense published runs felab predicted: the 90th percentile of their errors.
    dense_tpot = nearest_rank(predicted_serving_errors("mean TPOT", moe=False), 90)
    assert data["figures"]["tpot_mean_ms"]["share"] == pytest.approx(dense_tpot)
    assert data["figures"]["tpot_p99_ms"]["share"] == pytest.approx(dense_tpot)
    assert data["figures"]["tpot_mean_ms"]["rows"] == len(predicted_serving_errors("mean TPOT", moe=False))
    assert data["figures"]["ttft_mean_ms"]["share"] == pytest.approx(
        nearest_rank(predicted_serving_errors("mean TTFT", moe=False), 90)
    )
    assert data["scaled_from_h200"] is True
    for key in ("ttft_mean_ms", "ttft_percentiles", "tpot_mean_ms", "tpot_percentiles", "latency_mean_ms",
                "output_tok_s"):  # fmt: skip
        row = re.search(rf'<tr id="summary-{key}"[^>]*>(.*?)</tr>', body, re.S).group(1)
        assert re.search(r'class="expected-error"[^>]*>±[\d.]+% expected<', row), key
    # The run's time is its tokens ÷ the throughput the published runs measured.
    row = re.search(r'<tr id="summary-total_s"[^>]*>(.*?)</tr>', body, re.S).group(1)
    assert re.search(r'class="expected-error"[^>]*>−[\d.]+% / \+[\d.]+% expected<', row)
    shown = format_with_unit(round(100 * dense_tpot, 1), "%")
    assert f'data-expected="tpot_mean_ms">±{shown} expected' in body
    assert "scaled from the H200" in body
    # A GPU the published serving runs were measured on is not marked as scaled.
    for gpu in ("h100-sxm", "b200", "mi300x"):
        assert (
            client.get(JSON_URL, {**SMALL, "hardware": gpu}).json()["expected_error"]["scaled_from_h200"]
            is False
        )
    # A GPU the table has runs on is not marked as scaled.
    _, measured_gpu = page(client, {**SMALL, "hardware": "rtx-4090"})
    assert (
        client.get(JSON_URL, {**SMALL, "hardware": "rtx-4090"}).json()["expected_error"]["scaled_from_h200"]
        is False
    )
    assert "scaled from the H200" not in measured_gpu


def test_no_expected_error_comes_from_rows_a_number_was_fitted_on():
    from felab_sim.engine.serving.validation import P90, expected_error

    # The dense published runs felab predicted, and only those: the 90th percentile of their errors.
    dense_ttft = expected_error("mean TTFT", moe=False)
    assert dense_ttft.statistic == P90 and dense_ttft.rows == len(
        predicted_serving_errors("mean TTFT", False)
    )
    assert dense_ttft.share == pytest.approx(nearest_rank(predicted_serving_errors("mean TTFT", False), 90))
    assert f"90th percentile error of {dense_ttft.rows} published serving runs felab predicted" in (
        dense_ttft.why
    )
    # No predicted run measures a mean latency: it is TTFT plus the decode, the wider of the two.
    for moe in (False, True):
        latency = expected_error("mean latency", moe)
        parts = (expected_error("mean TTFT", moe), expected_error("mean TPOT", moe))
        assert latency.share == max(part.share for part in parts)
        assert "for mean latency, the wider of mean TTFT's and mean TPOT's" in latency.why


def test_the_notes_under_the_figures_name_the_runs_behind_their_bands_once(client):
    from felab_sim.engine.serving.validation import expected_error

    _, body = page(client, {**SMALL, "hardware": "h100-sxm"})
    body = html.unescape(body)
    results = re.search(r'id="engine-expected">(.*?)</p>', body, re.S).group(1)
    planner = re.search(r'id="planner-expected">(.*?)</p>', body, re.S).group(1)
    bands = {kind: expected_error(kind, moe=False) for kind in ("mean TTFT", "mean TPOT", "total time")}
    for note in (results, planner):
        # One source of rows, said once, then each band on what those runs measured.
        assert note.lower().count(bands["mean TTFT"].source.lower()) == 1, note
        for band in bands.values():
            assert note.count(f"{band.text} on {band.kind_words}") == 1, note
    assert "(also mean latency's: the wider of mean TTFT's and mean TPOT's)" in results
    # Per user and dollars are a number ÷ TPOT and ÷ throughput: their bands beside their sources'.
    for kind, figure in (("mean TPOT", "tok/s a user"), ("total time", "$ per million output tokens")):
        reciprocal = bands[kind].low_share / (1 + bands[kind].low_share)
        assert f"−{format_with_unit(round(100 * reciprocal, 1), '%')} / +" in planner
        assert f"on {figure}, " in planner


def test_too_few_published_runs_of_a_kind_give_their_largest_error_and_say_how_many(monkeypatch):
    from felab_sim.engine.serving import serving_validation
    from felab_sim.engine.serving.validation import FEW_SERVING, serving_expected_error

    few = [p for p in serving_validation.serving_points() if p.group == serving_validation.PREDICT][:3]
    monkeypatch.setattr(serving_validation, "serving_points", lambda: few)
    kind, moe = few[0].kind, few[0].moe
    band = serving_expected_error(kind, moe)
    same = [abs(p.error) for p in few if p.kind == kind and p.moe == moe]
    assert band.statistic == FEW_SERVING and band.rows == len(same) < 10
    assert band.share == pytest.approx(max(same))
    assert f"the {band.rows} published serving run" in band.why and "too few" in band.why


def test_a_kind_the_published_serving_runs_measure_takes_their_90th_percentile_error():
    from felab_sim.engine.serving.serving_validation import PREDICT, nearest_rank, serving_points
    from felab_sim.engine.serving.validation import P90, expected_error

    moe_ttft = expected_error("mean TTFT", moe=True)
    errors = [
        abs(p.error) for p in serving_points() if p.moe and p.metric == "ttft_mean_ms" and p.group == PREDICT
    ]
    assert moe_ttft.statistic == P90 and moe_ttft.rows == len(errors) >= 10
    assert moe_ttft.share == pytest.approx(nearest_rank(errors, 90))
    assert "90th percentile error of" in moe_ttft.why


def test_the_page_says_what_its_bands_are_and_what_is_fitted(client):
    _, body = page(client, {**SMALL, "hardware": "h100-sxm"})
    body = html.unescape(body)
    assert "from measured runs no number was fitted on" in body
    assert "published runs' output tok/s per GPU" in body and "engine runs' total time" not in body
    for fitted in ("a small kernel's fixed cost", "unpacks MXFP4 weights", "grouped products of MXFP4 experts",
                   "the MI300X's kernel multiple",
                   "each engine's two costs a request"):  # fmt: skip
        assert fitted in body, fitted

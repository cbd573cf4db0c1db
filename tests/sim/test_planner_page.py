"""The planner's curve on /sim/engine/, /sim/engine.json and `manage.py engine --curve`: the
adapting only (the curve's own numbers are tests/sim/test_planner.py's)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.serving.planner import WEB_CURVE_WORK, figure_errors
from felab_sim.engine.serving.serving_runs import split
from felab_sim.live import engine_curve

pytestmark = pytest.mark.django_db

URL = "/sim/engine/"
JSON_URL = "/sim/engine.json"
SHORT = {"curve_max_concurrency": "16"}
DEEPSEEK = {
    "model": "DeepSeek-V3",
    "hardware": "h200",
    "precision": "fp8",
    "tensor_parallel": "8",
    "input_tokens": "1024",
    "output_tokens": "1024",
    "requests": "20",
}


def test_the_default_page_answers_with_the_curve_its_table_and_each_figures_expected_error(client):
    response = client.get(URL)
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-figure="engine-planner-chart"' in body
    for level in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        assert f'id="planner-c{level}"' in body
    assert "The best concurrency that meets TTFT within 500 ms and TPOT within 50 ms" in body
    errors = figure_errors(moe=False)
    for key in ("output_tok_s_per_gpu", "tok_s_per_user", "ttft_mean_ms", "usd_per_m_output_tokens"):
        assert f'data-expected="{key}">{errors[key].text}<' in body
    assert "$8.00 a GPU-hour (Fireworks dedicated deployment" in body
    assert f"{WEB_CURVE_WORK:,.0f} units of work" in body


def test_htmx_gets_the_curve_in_the_results_partial(client):
    response = client.get(URL, {**SHORT, "tpot_target_ms": "30"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="engine-results"') and "<form" not in body
    assert 'id="engine-planner"' in body and "TPOT within 30 ms" in body
    assert 'id="planner-c32"' not in body  # the curve stops at 16


def test_a_new_target_reads_the_same_curve_again_without_simulating_it(client):
    engine_curve.cache_clear()
    client.get(URL, SHORT)
    client.get(URL, {**SHORT, "ttft_target_ms": "100", "slo_attainment_pct": "50"})
    client.get(URL, {**SHORT, "requests": "50"})  # the curve makes its own requests
    info = engine_curve.cache_info()
    assert (info.misses, info.hits) == (1, 2)


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"ttft_target_ms": "0"}, "ttft_target_ms", "TTFT target must be a number greater than 0"),
        ({"tpot_target_ms": "fast"}, "tpot_target_ms", "TPOT target must be a number"),
        ({"slo_attainment_pct": "101"}, "slo_attainment_pct", "at most 100"),
        ({"curve_max_concurrency": "2048"}, "curve_max_concurrency", "at most 1,024 (got 2,048)"),
        ({"curve_max_concurrency": "0"}, "curve_max_concurrency", "at least 1"),
    ],
)
def test_a_bad_target_is_a_400_naming_its_field_on_the_page_and_in_the_json(client, query, field, message):
    response = client.get(URL, query)
    body = response.content.decode()
    assert response.status_code == 400 and message in body
    assert f'name="{field}"' in body and 'aria-invalid="true"' in body
    as_json = client.get(JSON_URL, query)
    assert as_json.status_code == 400 and as_json.json()["error"]["param"] == field


def test_json_has_the_curve_its_targets_price_and_expected_errors(client):
    data = client.get(JSON_URL, {**SHORT, "tpot_target_ms": "30"}).json()
    curve = data["curve"]
    assert curve["params"]["tpot_target_ms"] == 30
    assert curve["levels_asked"] == [1, 2, 4, 8, 16]
    assert [point["concurrency"] for point in curve["points"]] == [1, 2, 4, 8, 16]
    point = curve["points"][0]
    assert set(point) >= {"output_tok_s_per_gpu", "tok_s_per_user", "goodput", "usd_per_m_output_tokens"}
    assert point["usd_per_m_output_tokens"] == pytest.approx(8 / (point["output_tok_s_per_gpu"] * 3600) * 1e6)
    meeting = [p["concurrency"] for p in curve["points"] if p["goodput"]["meets_targets"]]
    assert curve["best_concurrency"] == (max(meeting) if meeting else None)
    assert curve["price"]["name"] == "dedicated-gpu-hour" and "lesson 10" in curve["price"]["source"]
    assert (
        curve["expected_error"]["figures"]["tok_s_per_user"]
        == figure_errors(False)["tok_s_per_user"].as_json()
    )
    assert curve["work"]["spent"] <= curve["work"]["budget"] == WEB_CURVE_WORK


def test_deepseek_on_eight_h200s_puts_the_published_runs_beside_the_curve_and_names_the_command_for_the_rest(
    client,
):
    response = client.get(URL, DEEPSEEK)
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="planner-measured"' in body
    for run_id, group in split().items():
        if run_id.startswith("ix-sglang-h200-dsr1-tp8-1k1k-"):
            assert f'data-run="{run_id}"' in body
            assert ("a fit may see it" if group == "fit" else "predicted") in body
    assert "Measured at these settings with other lengths" in body
    assert 'id="planner-stopped"' in body
    assert "<code>manage.py engine --curve --model DeepSeek-V3 --hardware h200 --tensor-parallel 8" in body
    data = client.get(JSON_URL, DEEPSEEK).json()["curve"]
    published = sorted(
        (run_id for run_id in split() if run_id.startswith("ix-sglang-h200-dsr1-tp8-1k1k-")),
    )
    assert sorted(m["run_id"] for m in data["measured"]) == published
    assert {m["group"] for m in data["measured"]} == {
        "fitted" if split()[run_id] == "fit" else "predicted" for run_id in published
    }
    assert data["stopped_at"] is not None and "manage.py engine --curve" in data["stopped_because"]


def command(*args: str) -> str:
    out = io.StringIO()
    call_command("engine", *args, stdout=out)
    return out.getvalue()


SMALL_FLAGS = (
    "--model",
    "Llama-3.1-8B",
    "--hardware",
    "h200",
    "--input-tokens",
    "128",
    "--output-tokens",
    "32",
)


def test_the_command_prints_the_curve_with_each_columns_expected_error_and_the_answer():
    text = command(*SMALL_FLAGS, "--curve", "--curve-max-concurrency", "8", "--tpot-target-ms", "20")
    errors = figure_errors(False)
    lines = text.splitlines()
    assert f"tok/s/GPU {errors['output_tok_s_per_gpu'].text}" in lines[1]
    assert [line.split()[0] for line in lines[2:6]] == ["1", "2", "4", "8"]
    assert "$ at 8.00 a GPU-hour" in text
    assert "TPOT within 20 ms" in lines[-1]


def test_the_commands_json_is_the_pages_curve():
    data = json.loads(command(*SMALL_FLAGS, "--curve", "--curve-max-concurrency", "4", "--json"))
    assert [p["concurrency"] for p in data["curve"]["points"]] == [1, 2, 4]
    assert data["params"]["model"] == "Llama-3.1-8B" and data["curve"]["params"]["tpot_target_ms"] == 50
    assert data["curve"]["work"]["budget"] > WEB_CURVE_WORK


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tpot-target-ms", "20"), "--tpot-target-ms is a setting of the curve: add --curve"),
        (
            ("--curve", "--ttft-target-ms", "-1"),
            "--ttft-target-ms: ttft_target_ms must be a number greater than 0",
        ),
        (("--curve", "--curve-max-concurrency", "5000"), "--curve-max-concurrency:"),
    ],
)
def test_the_command_refuses_a_bad_curve_setting_naming_its_flag(args, message):
    with pytest.raises(CommandError, match=message):
        command(*SMALL_FLAGS, *args)


def test_the_page_and_json_say_the_curve_is_served_as_vllm_unlike_the_single_run(client):
    body = client.get(URL, SHORT).content.decode()
    assert 'id="planner-server"' in body and "served as vLLM V1 serves" in body
    assert "the settings offer no other engine" in body
    curve = client.get(JSON_URL, SHORT).json()["curve"]
    assert curve["server"]["engine"] == "vllm"


def test_the_dollars_say_they_are_at_one_price_for_every_gpu(client):
    body = client.get(URL, {**SHORT, "hardware": "b200"}).content.decode()
    assert 'id="planner-price-note"' in body and "one price for every GPU" in body
    assert "one price for every GPU" in client.get(JSON_URL, SHORT).json()["curve"]["price"]["note"]


def test_a_1k_1k_curve_answers_at_the_default_requests_within_its_own_budget(client):
    # The single run of 100 requests of 1,024 + 1,024 tokens is over its own cap; the curve does
    # not use its requests or their rate, so it runs within its budget and says where it stopped.
    lengths = {"input_tokens": "1024", "output_tokens": "1024"}
    response = client.get(URL, lengths)
    body = response.content.decode()
    assert response.status_code == 400  # the single run's refusal, named on its field
    assert 'name="requests"' in body and 'aria-invalid="true"' in body
    assert "units of simulation work, its cap" in body and "fewer requests" in body  # the single run
    assert 'data-figure="engine-planner-chart"' in body
    assert 'id="planner-c1"' in body and 'id="planner-c8"' in body
    assert 'id="planner-stopped"' in body and "shorten the output tokens" in body
    assert "manage.py engine --curve" in body
    # What was not simulated is the single run alone; its JSON, which answers with one, is not offered.
    assert (
        "Nothing simulated" not in body and "The single run was not simulated (the curve below was)" in body
    )
    assert "under <code>curve</code>" not in body.split('id="planner-budget"')[1].split("</p>")[0]
    spent = int(
        body.split('id="planner-budget"')[1].split("this curve spent ")[1].split(")")[0].replace(",", "")
    )
    assert 0 < spent <= WEB_CURVE_WORK
    swapped = client.get(URL, lengths, HTTP_HX_REQUEST="true")
    assert swapped.status_code == 200 and 'id="planner-c8"' in swapped.content.decode()

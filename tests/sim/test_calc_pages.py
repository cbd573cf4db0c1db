"""The explorable calculator pages: /sim/calc/NAME/ and the links to them."""

import json
import re

import pytest
from django.utils.html import escape

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.models import ParameterSet

pytestmark = pytest.mark.django_db


def value_cell(body: str, key: str) -> str:
    match = re.search(rf'<td class="calc-value" data-key="{key}">([^<]*)</td>', body)
    assert match, key
    return match[1]


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_calculator_page_shows_its_meaning_outputs_and_chart(client, name):
    calculator = CALCULATORS[name]
    response = client.get(f"/sim/calc/{name}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert escape(calculator.meaning) in body
    for key in calculator.output_keys:
        assert f'data-key="{key}"' in body
    island = re.search(r'<script id="calc-figure" type="application/json">(.*?)</script>', body, re.S)
    assert json.loads(island[1])["data"]
    for param in calculator.params:
        assert f'name="{param.name}"' in body


def test_settings_in_the_address_are_computed(client):
    body = client.get(
        "/sim/calc/decode-ceiling/", {"bandwidth_gbs": "273", "model_gb": "4.9"}
    ).content.decode()
    assert value_cell(body, "ceiling_tok_s") == "55.7 tok/s"


def test_htmx_gets_only_the_results(client):
    response = client.get("/sim/calc/speculative/", {"acceptance": "0.7"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="calc-results"')
    assert "<form" not in body
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"acceptance": "2"}, "Acceptance (α) must be a number at least 0 and at most 1 (got 2)"),
        ({"acceptance": "nan"}, "Acceptance (α) must be a number"),
        ({"draft_tokens": ""}, "Draft tokens (k) must be an integer"),
        ({"colour": "red"}, "&#x27;colour&#x27; is not a parameter of speculative"),
    ],
)
def test_bad_settings_are_a_400_naming_the_parameter(client, query, message):
    response = client.get("/sim/calc/speculative/", query)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_setting_given_twice_is_refused(client):
    response = client.get("/sim/calc/speculative/?acceptance=0.5&acceptance=0.6")
    assert response.status_code == 400
    assert "acceptance is given 2 times; give it once" in response.content.decode()


def test_the_courses_measurements_are_shown_where_they_were_measured(client):
    body = client.get("/sim/calc/decode-ceiling/").content.decode()
    assert "llama-bench tg128 on an M4 Max, 546 GB/s (lesson 04)" in body
    assert "<td>86 tok/s</td><td>111.4 tok/s</td>" in body
    other = client.get("/sim/calc/decode-ceiling/", {"bandwidth_gbs": "273"}).content.decode()
    assert "lesson 04)" not in other  # measured on another machine: not drawn beside it


def test_lesson_13s_measurements_beside_the_formula(client):
    body = client.get("/sim/calc/speculative/").content.decode()
    assert "<td>1.9×</td><td>2.3×</td>" in body
    assert (
        "<td>1.14×</td><td>0.94×</td>" in body
    )  # lesson 13: the formula predicts 0.94×, the lesson measured 1.14×


def test_presets_keep_the_other_settings(client):
    body = client.get("/sim/calc/decode-ceiling/", {"model_gb": "4.9"}).content.decode()
    # The H100's figures from the one hardware table: 80 GiB is 85.9 GB, of which vLLM uses 0.9;
    # its dense BF16 and FP8 peaks, for the compute ceiling.
    h100 = (
        "?bandwidth_gbs=3350&amp;model_gb=4.9&amp;ram_gb=85.9&amp;memory_utilization=0.9"
        "&amp;peak_tflops=989.4&amp;peak_fp8_tflops=1978.9"
    )
    assert f'href="{h100}">NVIDIA H100 SXM5 80GB</a>' in body
    assert "https://www.nvidia.com/en-us/data-center/h100/" in body


def test_the_page_lists_the_parameter_sets_cards_use(client):
    ParameterSet.objects.create(
        slug="l13-prose", calculator="speculative", name="Prose", params={"acceptance": 0.41}
    )
    body = client.get("/sim/calc/speculative/").content.decode()
    assert '<a href="?acceptance=0.41">Prose</a>' in body


def test_the_simulator_links_every_calculator(client):
    body = client.get("/sim/").content.decode()
    for name, calculator in CALCULATORS.items():
        assert f'href="/sim/calc/{name}/"' in body
        assert calculator.title in body


def test_an_unknown_calculator_page_is_a_404(client):
    assert client.get("/sim/calc/nope/").status_code == 404


def test_htmx_gets_the_errors_in_place_of_the_results(client):
    response = client.get("/sim/calc/prefill/", {"cached_tokens": "9000"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200  # htmx swaps only a success: the stale results must go
    assert 'role="alert"' in body and "Cached tokens must be at most prompt_tokens" in body


def test_the_page_shows_the_shape_refusal_beside_the_parameter_count(client):
    response = client.get("/sim/calc/finetune-memory/", {"params_b": "0.05"})
    assert response.status_code == 400
    assert "0.05B stated, but the shape holds 8.03B" in response.content.decode()


def test_every_gpu_preset_is_the_hardware_tables_entry_with_its_spec_sheet():
    from felab_sim.engine.course.presets import HARDWARE
    from felab_sim.engine.hardware.hardware import HARDWARE as GPUS

    by_name = {preset.name: preset for preset in HARDWARE}
    for gpu in GPUS:
        preset = by_name[gpu.vendor_name]
        assert preset.values["bandwidth_gbs"] == gpu.memory_bandwidth / 1e9
        assert preset.values["memory_gb"] == round(gpu.memory_bytes / 1e9, 1)
        assert preset.values.get("peak_tflops") == (
            None if gpu.bf16_flops is None else round(gpu.bf16_flops / 1e12, 1)
        )
        assert preset.values.get("peak_fp8_tflops") == (
            None if gpu.fp8_flops is None else round(gpu.fp8_flops / 1e12, 1)
        )
        assert preset.source.startswith("https://") and gpu.source.startswith(preset.source)
    # Nothing is written twice: every hardware preset is an entry of the one table (the Macs too).
    assert len(HARDWARE) == len(GPUS) == len({p.name for p in HARDWARE})


def test_the_table_holds_the_issues_hardware_with_apples_macs_at_their_published_bandwidth():
    from felab_sim.engine.hardware.hardware import hardware_preset

    for name in ("h100-sxm", "h100-pcie", "h200", "b200", "a100-80gb", "l40s", "mi300x", "dgx-spark"):
        assert hardware_preset(name).memory_bandwidth > 0
    assert hardware_preset("h100-pcie").memory_bandwidth == 2000e9
    assert hardware_preset("h100-pcie").fp8_flops == 1513e12  # 3,026 with sparsity, halved
    assert hardware_preset("b200").bf16_flops == 2250e12 and hardware_preset("b200").fp8_flops == 4500e12
    macs = {"m4": 120e9, "m4-pro": 273e9, "m4-max-32c": 410e9, "m4-max-40c": 546e9, "m3-ultra": 819e9}
    for name, bandwidth in macs.items():
        mac = hardware_preset(name)
        assert mac.memory_bandwidth == bandwidth
        assert mac.bf16_flops is None and mac.fp8_flops is None  # Apple publishes no TFLOPS: none invented
    assert hardware_preset("m4-max-32c").memory_bytes == 36 * 2**30  # the course's 36 GB Mac

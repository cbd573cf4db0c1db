"""Every output carries its formula with the settings' numbers in it (issue 21): in the engine's
result, the JSON, the command line and the page."""

import io
import json

import pytest
from django.core.management import call_command

from felab_sim.engine.calculators import CALCULATORS, get
from felab_sim.engine.core.calculator import counted, typed


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_output_of_every_calculator_has_a_formula_led_by_its_value(name):
    calculator = CALCULATORS[name]
    for example in calculator.examples:
        result = calculator.run(example.params)
        for key, out in result.outputs.items():
            assert out.formula, f"{name}.{key} has no formula"
            # "131,072 B = ...", "yes: ...", or "— : why there is no value".
            assert out.formula.startswith(out.text()) or out.formula.startswith("— :"), (key, out.formula)


def test_the_kv_formula_is_the_issues_example_with_the_students_numbers():
    result = get("kv-cache").run({})
    assert (
        result.outputs["kv_bytes_per_token"].formula == "131,072 B = 2 × 32 layers × 8 KV heads × 128 × 2 B"
    )
    typed_in = get("kv-cache").run({"layers": 80, "kv_dtype": "q8_0"})
    assert typed_in.outputs["kv_bytes_per_token"].formula == (
        "174,080 B = 2 × 80 layers × 8 KV heads × 128 × 1.0625 B"
    )


def test_formulas_follow_the_settings_not_the_defaults():
    out = get("roofline").run(
        {"peak_tflops": 1979, "bytes_per_weight": 1, "batch": 512, "context_tokens": 1000}
    )
    assert out.outputs["kv_gb_per_step"].formula == "67.1 GB = 512 sequences × 1,000 tokens × 131,072 B ÷ 10⁹"
    assert out.outputs["attainable_tok_s"].formula == "22,836 tok/s = 512 sequences ÷ 22.4 ms"
    refused = get("roofline").run({"params_b": 70, "batch": 1_000_000})
    assert refused.outputs["attainable_tok_s"].formula == "— : does not fit, needs 142 GB of 77.3 GB"


@pytest.mark.django_db
def test_the_json_and_the_command_line_carry_each_formula(client):
    body = client.get("/sim/calc/kv-cache.json").json()
    assert body["outputs"]["kv_kib_per_token"]["formula"] == "128 KiB = 131,072 B ÷ 1,024"
    out = io.StringIO()
    call_command("calc", "kv-cache", stdout=out)
    assert "    128 KiB = 131,072 B ÷ 1,024" in out.getvalue().splitlines()
    out = io.StringIO()
    call_command("calc", "kv-cache", "--json", stdout=out)
    assert (
        json.loads(out.getvalue())["outputs"]["kv_kib_per_token"]["formula"] == "128 KiB = 131,072 B ÷ 1,024"
    )


@pytest.mark.django_db
def test_the_page_writes_each_formula_under_its_output(client):
    html = client.get("/sim/calc/kv-cache/", {"layers": "80"}).content.decode()
    assert '<span class="calc-formula">327,680 B = 2 × 80 layers × 8 KV heads × 128 × 2 B</span>' in html


def test_a_setting_is_written_as_typed_and_a_count_with_its_noun():
    assert [
        typed(131072.0, "B"),
        typed(1.0625, "B"),
        typed(85.9, "GB"),
        typed(0.5, "$"),
        typed(12.5, "%"),
    ] == [
        "131,072 B",
        "1.0625 B",
        "85.9 GB",
        "$0.5",
        "12.5%",
    ]
    assert [counted(1, "GPU"), counted(8, "GPU"), counted(8192, "token")] == [
        "1 GPU",
        "8 GPUs",
        "8,192 tokens",
    ]


def test_a_message_that_names_its_parameter_with_a_colon_is_led_by_the_label_once():
    from felab_sim.engine.core.params import ParamError
    from felab_sim.pages.forms import led_by

    error = ParamError("workload", "workload: the trace needs more than 50,000 units")
    assert led_by("Workload", error) == "Workload: the trace needs more than 50,000 units"

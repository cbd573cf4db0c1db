"""The calculators' command line (manage.py calc) and JSON endpoint (/sim/calc/NAME.json)."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from felab_sim.engine.calculators import CALCULATORS

# The JSON endpoint's rate limit counts in the database.
pytestmark = pytest.mark.django_db


def calc(*args: str) -> str:
    out = io.StringIO()
    call_command("calc", *args, stdout=out)
    return out.getvalue()


def test_list_shows_every_calculator():
    listed = calc("--list")
    for name, calculator in CALCULATORS.items():
        assert name in listed and calculator.title in listed


def test_list_as_json_carries_the_declarations():
    data = json.loads(calc("--list", "--json"))
    assert [entry["name"] for entry in data] == list(CALCULATORS)
    prefill = data[0]
    assert prefill["params"][0] == {
        "name": "prompt_tokens",
        "type": "int",
        "default": 8000,
        "unit": "tokens",
        "label": "prompt tokens",
        "help": "Tokens in the prompt (about 4 characters each).",
        "min": 1,
        "min_exclusive": False,
        "max": 10_000_000,
    }
    assert {"key": "ttft_ms", "unit": "ms", "label": "time to first token"} in prefill["outputs"]


def test_a_calculator_prints_its_outputs_with_the_keys_cards_cite():
    out = calc("decode-ceiling", "--bandwidth-gbs", "546", "--model-gb", "4.9")
    assert "111.4 tok/s  ceiling_tok_s" in out


def test_flags_use_dashes_and_json_matches_the_endpoint(client):
    data = json.loads(calc("prefix-cache", "--prefix-chars", "12120", "--suffix-chars", "80", "--json"))
    assert data["outputs"]["cached_tokens"]["value"] == 3008
    response = client.get("/sim/calc/prefix-cache.json", {"prefix_chars": "12120", "suffix_chars": "80"})
    assert response.json() == data


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("prefill", "--prompt-tokens", "nan"), "--prompt-tokens: prompt_tokens must be an integer"),
        (("prefill", "--prefill-tok-s", "inf"), "--prefill-tok-s: prefill_tok_s must be a number"),
        (("prefill", "--prompt-tokens", ""), "--prompt-tokens: prompt_tokens must be an integer"),
        (("kv-cache", "--kv-dtype", "int3"), "--kv-dtype: kv_dtype must be one of f16, q8_0, q4_0, fp8"),
        (
            ("prefill", "--prompt-tokens", "10", "--cached-tokens", "11"),
            "--cached-tokens: cached_tokens must be at most",
        ),
        (("prefill", "--prompt-tokns", "3"), "unrecognized arguments: --prompt-tokns"),
        (("prefil",), "invalid choice: 'prefil'"),
        ((), "name a calculator"),
    ],
)
def test_bad_input_is_an_error_naming_the_parameter(args, message):
    with pytest.raises(CommandError, match=message):
        calc(*args)


def test_bad_input_exits_non_zero_from_the_shell():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "manage.py", "calc", "speculative", "--acceptance", "1.5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "--acceptance: acceptance must be a number at least 0 and at most 1" in done.stderr


# --------------------------------------------------------------------------- JSON


def test_every_calculator_answers_json_with_its_defaults(client):
    for name, calculator in CALCULATORS.items():
        data = client.get(f"/sim/calc/{name}.json").json()
        assert data["calculator"] == name
        assert list(data["outputs"]) == list(calculator.output_keys)


def test_json_reproduces_a_worked_example(client):
    data = client.get("/sim/calc/speculative.json?acceptance=0.8&draft_tokens=4").json()
    assert data["outputs"]["speedup"]["value"] == pytest.approx(2.4, abs=0.005)
    assert data["params"] == {
        "acceptance": 0.8,
        "draft_tokens": 4,
        "draft_cost": 0.1,
        "verify_cost": 0.1,
        "baseline_tok_s": 62.0,
    }


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("prompt_tokens=", "prompt_tokens"),
        ("prompt_tokens=lots", "prompt_tokens"),
        ("prompt_tokens=-5", "prompt_tokens"),
        ("prefill_tok_s=NaN", "prefill_tok_s"),
        ("prefill_tok_s=Infinity", "prefill_tok_s"),
        ("prefill_tok_s=1e999", "prefill_tok_s"),
        ("prompt_tokens=1&prompt_tokens=2", "prompt_tokens"),
        ("colour=red", "colour"),
        ("prompt_tokens=" + "9" * 5000, "prompt_tokens"),
    ],
)
def test_bad_json_input_is_a_400_naming_the_parameter(client, query, param):
    response = client.get(f"/sim/calc/prefill.json?{query}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == param
    assert param in error["message"]


@pytest.mark.django_db  # the 404 page reads the content version, in the database without Redis
def test_an_unknown_calculator_is_a_404(client):
    assert client.get("/sim/calc/nope.json").status_code == 404


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_calculators_help_lists_its_flags(name, capsys):
    with pytest.raises(SystemExit) as done:
        calc(name, "--help")
    assert done.value.code == 0
    out = capsys.readouterr().out
    for param in CALCULATORS[name].params:
        assert param.flag in out


def test_a_shape_that_disagrees_with_the_parameter_count_is_a_400_naming_both(client):
    # Llama-3.1-8B's default shape (8.03B parameters) under a stated 0.05B: LoRA would train 27%.
    response = client.get("/sim/calc/finetune-memory.json?params_b=0.05")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "params_b"
    assert "0.05B stated, but the shape holds 8.03B" in error["message"]

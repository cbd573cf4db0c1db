"""Parameter declarations: one parse for text and JSON values, errors that name the parameter."""

import math

import pytest

from felab_sim.engine.calculators import CALCULATORS, get
from felab_sim.engine.core.params import ParamError

PREFILL = get("prefill")


def refused(raw: dict[str, object], calculator=PREFILL) -> ParamError:
    with pytest.raises(ParamError) as error:
        calculator.validate(raw)
    return error.value


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ({"prompt_tokens": ""}, "prompt_tokens"),
        ({"prompt_tokens": None}, "prompt_tokens"),
        ({"prompt_tokens": "lots"}, "prompt_tokens"),
        ({"prompt_tokens": 8.5}, "prompt_tokens"),
        ({"prompt_tokens": True}, "prompt_tokens"),
        ({"prompt_tokens": 0}, "prompt_tokens"),
        ({"prompt_tokens": "9" * 300}, "prompt_tokens"),
        ({"prefill_tok_s": "nan"}, "prefill_tok_s"),
        ({"prefill_tok_s": "inf"}, "prefill_tok_s"),
        ({"prefill_tok_s": math.inf}, "prefill_tok_s"),
        ({"prefill_tok_s": [1]}, "prefill_tok_s"),
        ({"overhead_ms": -1}, "overhead_ms"),
        ({"prompt_tokns": 5}, "prompt_tokns"),
    ],
)
def test_bad_values_are_refused_with_the_parameter_named(raw, param):
    error = refused(raw)
    assert error.param == param
    assert param in error.message


def test_text_and_json_values_parse_alike():
    assert PREFILL.validate({"prompt_tokens": " 12 ", "prefill_tok_s": "2500"}) == PREFILL.validate(
        {"prompt_tokens": 12, "prefill_tok_s": 2500.0}
    )
    assert PREFILL.validate({"prompt_tokens": 12.0})["prompt_tokens"] == 12


def test_choices_and_switches():
    assert get("kv-cache").validate({"kv_dtype": "q8_0"})["kv_dtype"] == "q8_0"
    assert refused({"kv_dtype": "int3"}, get("kv-cache")).param == "kv_dtype"
    finetune = get("finetune-memory")
    assert finetune.validate({"mlp": "on"})["mlp"] is True
    assert finetune.validate({"mlp": "false"})["mlp"] is False
    assert refused({"mlp": "maybe"}, finetune).param == "mlp"


def test_an_empty_optional_parameter_means_not_given():
    assert get("decode-ceiling").validate({"model_gb": ""})["model_gb"] is None


def test_only_changed_values_are_kept_for_a_parameter_set():
    calc = get("decode-ceiling")
    assert calc.changed(calc.validate({"bandwidth_gbs": "273", "params_b": "8"})) == {"bandwidth_gbs": 273.0}


def test_every_declaration_is_complete_and_its_defaults_compute():
    for calculator in CALCULATORS.values():
        assert calculator.meaning and calculator.title and calculator.lessons
        for param in calculator.params:
            assert param.help.endswith("."), param.name
        result = calculator.run({})
        assert list(result.outputs) == list(calculator.output_keys)
        for out in result.outputs.values():
            assert out.value is None or isinstance(out.value, str) or math.isfinite(out.value)


def test_the_json_shape():
    data = get("prefill").run({"prompt_tokens": 12}).as_json()
    assert data["calculator"] == "prefill"
    assert data["params"]["prompt_tokens"] == 12
    assert data["outputs"]["ttft_ms"] == {
        "value": pytest.approx(19.8),
        "unit": "ms",
        "label": "time to first token",
        "formula": "19.8 ms = 15 ms overhead + 4.8 ms",
    }


def test_a_value_is_written_back_in_full():
    from felab_sim.pages.forms import field_text

    assert field_text(0.123456789) == "0.123456789"
    assert field_text(546.0) == "546"
    assert field_text(True) == "on"
    assert field_text(None) == ""


@pytest.mark.parametrize(
    ("calculator", "raw", "shown"),
    [
        ("prefix-cache", {"prefix_chars": 1e9}, "(got 1,000,000,000)"),
        ("prefix-cache", {"prefix_chars": "1000000000"}, "(got 1,000,000,000)"),
        ("prefill", {"overhead_ms": 100000.5}, "(got 100000.5)"),
        ("prefill", {"overhead_ms": "1e300"}, "(got 1e+300)"),
    ],
)
def test_an_out_of_range_number_is_echoed_as_a_person_writes_it(calculator, raw, shown):
    with pytest.raises(ParamError) as refused:
        get(calculator).run(raw)
    assert refused.value.message.endswith(shown)


def test_a_label_starting_with_a_symbol_keeps_its_case():
    from felab_sim.engine.core.params import heading

    assert heading("β × margin") == "β × margin"
    assert heading("memory bandwidth") == "Memory bandwidth"
    assert get("dpo").param("beta").label == "beta (β)"


def test_one_lesson_is_written_singular():
    assert get("prefix-cache").lessons_text == "lesson 06"
    assert get("decode-ceiling").lessons_text == "lessons 00, 04, 12"

"""An instructor's mistake formula is read strictly and evaluated boundedly
(felab_sim.engine.problems.formulas): arithmetic over the draw's names, nothing else."""

import pytest

from felab_sim.engine.problems.formulas import MAX_LENGTH, MAX_NODES, FormulaError, parse_formula

NAMES = {"answer", "layers", "out_kv_gb"}


@pytest.mark.parametrize(
    ("text", "value"),
    [("answer * 2", 20.0), ("answer / 1.073741824", 10 / 1.073741824), ("(answer + out_kv_gb) / 2", 6.5),
     ("answer * 1024 ** 3 / 10 ** 9", 10 * 1.073741824), ("-answer + 30", 20.0), ("answer / layers", 0.3125)],
)  # fmt: skip
def test_arithmetic_over_the_draws_names_is_read_and_evaluated(text, value):
    formula = parse_formula(text, NAMES)
    assert formula.value({"answer": 10.0, "layers": 32.0, "out_kv_gb": 3.0}) == pytest.approx(value)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("answer.__class__", "no attributes"),
        ("__import__('os').system('id')", "no function calls"),
        ("answer.real", "no attributes"),
        ("abs(answer)", "no function calls"),
        ("[answer][0]", "no "),
        ("answer if answer else 1", "no "),
        ("answer > 2", "no "),
        ("lambda: 1", "no "),
        ("'2' * 3", "no text"),
        ("answer ** 99", "exponent"),
        ("2 ** answer", "exponent"),
        ("9 ** 9 ** 9", "exponent"),
        ("answer // 2", "only + - * / and **"),
        ("answer % 2", "only + - * / and **"),
        ("answer << 2", "only + - * / and **"),
        ("not answer", "only + - * / and **"),
        ("answer * ", "not a formula"),
        ("", "write a formula"),
        ("context_tokens * 2", "'context_tokens' is not a number"),
        ("__builtins__", "a name is"),
        ("Answer * 2", "lower-case"),
        ("answer; import os", "not a formula"),
        ("1e999 * answer", "no "),
    ],
)
def test_anything_but_arithmetic_over_known_names_is_refused_with_a_reason(text, words):
    with pytest.raises(FormulaError) as refused:
        parse_formula(text, NAMES)
    assert words in refused.value.message


def test_an_oversized_formula_is_refused_before_it_is_parsed():
    with pytest.raises(FormulaError, match=f"at most {MAX_LENGTH} characters"):
        parse_formula("answer" + " + 1" * 60, NAMES)
    with pytest.raises(FormulaError, match=f"at most {MAX_NODES} parts"):
        parse_formula("+".join(["1"] * 40), NAMES)
    with pytest.raises(FormulaError, match="characters"):
        parse_formula("(" * 5000 + "1" + ")" * 5000, NAMES)


@pytest.mark.parametrize(
    "text", ["answer / (layers - layers)", "answer ** 12 * 1e300", "(0 - answer) ** 0.5"]
)
def test_what_has_no_finite_real_value_gives_none_not_an_error(text):
    assert parse_formula(text, NAMES).value({"answer": 1e30, "layers": 2.0, "out_kv_gb": 1.0}) is None


def test_a_missing_name_gives_none():
    assert parse_formula("answer * layers").value({"answer": 2.0}) is None

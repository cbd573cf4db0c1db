"""Reading a typed answer back: every way the site prints a number reads as that number."""

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from felab_sim.engine.core.calculator import Output
from felab_sim.engine.core.numbers import format_with_unit
from felab_sim.engine.problems.answers import AnswerError, check, read_answer, tolerance_text

# Every answer unit the bundled practice templates use (tests/lessons/test_practice_bundled.py
# checks the templates; this list is checked against them below).
TEMPLATE_UNITS = ["", "×", "%", "$", "GB", "MB", "ms", "tok/s", "conversations", "replicas",
                  "sequences", "tickets"]  # fmt: skip
# Across every branch of the printing rule: scientific below 1e-4, two significant digits below 1,
# one decimal to 1,000, thousands separated above.
VALUES = [2.5e-9, 8.8e-7, 4.5e-5, 9.99e-5, 1e-4, 0.00042, 0.042, 0.53, 1, 5.1, 41.4, 275.1, 999.9,
          1000, 3357, 25_856, 1_234_567, 8.2e9]  # fmt: skip


def test_the_unit_list_is_every_unit_the_bundled_templates_use():
    from tests.lessons.test_practice_bundled import SPECS

    assert {spec.answer_unit for spec in SPECS.values()} <= set(TEMPLATE_UNITS)


def _printed_forms(value: float, unit: str) -> list[str]:
    forms = [format_with_unit(value, unit), Output(value, unit, "").text()]
    return list(dict.fromkeys(forms))


@pytest.mark.parametrize("unit", TEMPLATE_UNITS)
@pytest.mark.parametrize("value", VALUES)
def test_an_answer_typed_as_the_site_prints_it_reads_back_as_that_number(value, unit):
    for printed in _printed_forms(float(value), unit):
        read = read_answer(printed, unit).value
        # Within print precision: the rule keeps at least two significant digits, so what it
        # prints is within 5% of the value (1.05 prints "1.1", 1.04 "1").
        assert math.isclose(read, value, rel_tol=0.051), printed


@pytest.mark.parametrize(
    ("typed", "unit", "value"),
    [
        ("4.5 × 10⁻⁵", "", 4.5e-5),
        ("4.5×10⁻⁵", "", 4.5e-5),
        ("1.2 × 10^3", "", 1200),
        ("1.2x10^3", "", 1200),
        ("1.2X10^-3", "", 0.0012),
        ("1.2·10³", "", 1200),
        ("1.2⋅10³", "", 1200),
        ("1.2 * 10**3", "", 1200),
        ("1.2 × 10^−3", "", 0.0012),
        ("1.2 × 10⁺³", "", 1200),
        ("−3", "", -3),
        ("−3.5e−2", "", -0.035),
        ("4.5\u00a0×\u00a010⁻⁵ GB", "GB", 4.5e-5),
        ("24\u202ftok/s", "tok/s", 24),
        ("24\u2009GB", "GB", 24),
        ("17\u202f180 MB", "GB", 17.18),
        ("17\u00a0180", "", 17180),
        ("1,234.5", "", 1234.5),
        ("1,234,567", "", 1234567),
        ("12 %", "%", 12),
        ("12%", "%", 12),
        ("$4.5 × 10⁻⁵", "$", 4.5e-5),
        ("4.5 × 10⁻⁵ $", "$", 4.5e-5),
        ("2.4×", "×", 2.4),
        ("2.4 x", "×", 2.4),
        ("4.5 × 10⁻² s", "ms", 45),
    ],
)
def test_the_forms_people_write_a_printed_number_in_read(typed, unit, value):
    assert math.isclose(read_answer(typed, unit).value, value, rel_tol=1e-9)


@pytest.mark.parametrize(
    "typed",
    ["1.2 × 10", "1.2 × 10⁻", "× 10³", "10^", "1.2 10^3 GB x", "4.5 × 10⁻⁵ ×× GB", "1 ^ 2 GB",
     "3 GB ** 2 ((", "1.2 × 10^400"],
)  # fmt: skip
def test_a_malformed_power_of_ten_is_explained_never_an_exception(typed):
    with pytest.raises(AnswerError):
        read_answer(typed, "GB")


@given(
    ratio=st.floats(min_value=0.01, max_value=100, allow_nan=False),
    tolerance=st.sampled_from([0.01, 0.02, 0.03, 0.05, 0.1]),
)
def test_a_verdicts_words_never_contradict_it(ratio, tolerance):
    checked = check(ratio * 37.0, 37.0, tolerance)
    words = checked.words
    assert not words.lower().startswith(checked.verdict)  # the page prints the verdict once
    number = float(re.match(r"[\d,.]+", words.replace("on the", "0 on the")).group().replace(",", ""))
    if checked.verdict == "right":
        assert number <= tolerance * 100
    elif checked.verdict == "close":
        assert tolerance * 100 < number <= 3 * tolerance * 100
        assert words.endswith(f"right is within {tolerance_text(tolerance)}")
    elif "×" in words:
        assert number > 2
    else:  # off within 2×: a percent beyond the close band
        assert 3 * tolerance * 100 < number <= 100 and words.endswith(
            f"right is within {tolerance_text(tolerance)}"
        )


@pytest.mark.parametrize("given", [5e-324, 1e-320, 2.2e-308])
def test_an_answer_whose_ratio_underflows_to_zero_is_off_by_more_than_any_factor(given):
    checked = check(given, 1e10, 0.1)
    assert checked.verdict == "off"
    assert "too low" in checked.words


@pytest.mark.parametrize(
    ("typed", "unit"),
    [("5 9**9**9", ""), ("5 9**9**9", "tok/s"), ("5 GB**9**9**9", "GB"), ("5 GB^9", "GB"), ("5 s**-4", "×"),
     ("5 GB GB GB GB GB GB GB", "GB"), ("5 (GB)**2", "GB"), ("5 YB^3 YB^3 YB^3 YB^3 YB^3 YB^3", "")],
)  # fmt: skip
def test_a_unit_past_the_units_grammar_is_refused_before_pint_reads_it(typed, unit):
    """Only words raised to at most 3 reach pint, which evaluates any power it is given."""
    with pytest.raises(AnswerError, match="not a unit the site knows"):
        read_answer(typed, unit)


@pytest.mark.parametrize(("typed", "unit", "value"), [("3 GB^2/GB", "GB", 3), ("3 GB·s/s", "GB", 3),
                                                     ("3 s²/s", "ms", 3000), ("3 tokens per second", "tok/s", 3)])  # fmt: skip
def test_a_unit_within_the_grammar_still_reads(typed, unit, value):
    assert math.isclose(read_answer(typed, unit).value, value)


@pytest.mark.parametrize(
    ("typed", "unit"), [("5 GB", ""), ("5 B", "%"), ("5 GB", "×"), ("5 %", "GB"), ("5 GB/s", "")]
)
def test_a_size_stands_only_for_a_size(typed, unit):
    with pytest.raises(AnswerError):
        read_answer(typed, unit)


@pytest.mark.parametrize(
    ("typed", "unit", "value"),
    [
        ("10.7 Gb", "GB", 1.3375),
        ("85.6 Gb", "GB", 10.7),
        ("8 Gb/s", "GB/s", 1),
        ("4 Mb", "MB", 0.5),
        ("2 Kb", "MB", 0.00025),
    ],
)
def test_bits_are_a_data_size_read_as_an_eighth_of_a_byte(typed, unit, value):
    read = read_answer(typed, unit, above_zero=True)
    assert math.isclose(read.value, value) and "b is bits, 8 to a byte (B)" in read.note


def test_gigabytes_typed_as_gigabits_are_eight_times_too_low_and_say_why():
    read = read_answer("10.7 Gb", "GB", above_zero=True)
    assert read.note == "10.7 Gb = 1.3 GB: b is bits, 8 to a byte (B)"
    assert check(read.value, 10.7, 0.1).words == "8× too low"

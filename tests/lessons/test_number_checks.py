"""Derived numbers in card prose: found, covered by a live number or a check, or flagged.

The checker (lessons/number_checks.py) is pure: most of this module runs without a database.
The last tests run it over every bundled card and over the admin.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from lessons import number_checks
from lessons.content_format import CONTENT_DIR
from lessons.models import Card
from lessons.number_checks import ExpressionError, check_card, evaluate, find_derived


def _found(text: str) -> list[tuple[str, str]]:
    return [(d.number, d.kind) for d in find_derived("more_detail", text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("8 people: 275.1 ÷ 54.1 = 5.1.", [("5.1", "= N")]),
        ("about 5 times the 54.1, 29% slower", [("5", "N times"), ("29", "N%")]),
        ("Throughput went up 5×, but", [("5", "N times")]),
        (
            "2 × 32 × 8 × 128 × 2 = 131,072 bytes, 128 KiB per token",
            [("131,072", "= N"), ("128", "unit conversion")],
        ),
        (
            "128 KiB per token, so one conversation holds 512 MiB. On an 80 GB chip",
            [("512", "unit conversion")],
        ),
        ("120 people ÷ {{sim.capacity}} = {{sim.replicas.u120}} servers", [("{{sim.replicas.u120}}", "= N")]),
        ("10% + 45% = 55% of the old bill", [("10", "N%"), ("45", "N%"), ("55", "= N%")]),
    ],
)
def test_the_checker_finds_products_ratios_percentages_times_and_conversions(text, found):
    assert _found(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "At C = 16 half the requests wait; at s = 0.9 and r = 0.5 it is cheaper.",  # names given values
        "take the one at position ceil(0.95 × n), and 2 × layers × heads",  # products still being written
        "set `max_tokens = 128` and `temperature=0`",  # code is a setting
        "On an 80 GB chip that keeps 16 GB of weights, 8 GB are free",  # one unit: nothing converted
        "r × (in + out) = 16 × 8,192",  # the arithmetic goes on: no result yet
    ],
)
def test_names_settings_products_and_one_unit_are_not_derived_numbers(text):
    assert _found(text) == []


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("275.1 ÷ 54.1", 275.1 / 54.1),
        ("2 × 32 × 8 × 128 × 2", 131072),
        ("(1 - 38.9 / 54.9) * 100", (1 - 38.9 / 54.9) * 100),
        ("1,000 ÷ 18", 1000 / 18),
        ("ceil(120 / 8 * 1.2)", 18),
        ("2^10", 1024),
        ("18 x 1.42", 18 * 1.42),
        ("min(3, 4) + max(1, 2)", 5),
    ],
)
def test_an_expression_is_worked_out_as_arithmetic(expression, value):
    assert evaluate(expression) == pytest.approx(value)


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "().__class__",
        "open('x')",
        "9 ** 9 ** 9",
        "1 / 0",
        "lambda: 1",
        "x + 1",
        "[1, 2]",
        "round(1, ndigits=1)",
    ],
)
def test_anything_but_arithmetic_is_refused_unrun(expression):
    with pytest.raises(ExpressionError):
        evaluate(expression)


def test_the_checker_never_calls_eval_or_imports_django():
    source = Path(number_checks.__file__).read_text()
    names = {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}
    assert not names & {"eval", "exec", "compile", "__import__"}
    assert "django" not in source


@pytest.mark.parametrize(
    ("value", "number", "agrees"),
    [
        (5.085, "5.1", True),
        (29.14, "29", True),
        (29.6, "29", False),
        (0.01452, "0.0145", True),
        (0.0146, "0.0145", False),
        (131072, "131,072", True),
    ],
)
def test_a_number_agrees_to_the_digits_it_is_written_with(value, number, agrees):
    assert number_checks.agrees(value, number) is agrees


SEED_TEXT = {
    "real_numbers": "8 people: 275.1 in total, about 5 times the 54.1 (275.1 ÷ 54.1 = 5.1). "
    "54.9 falls to 38.9 tokens per second, 29% slower. Each keeps 71% of their solo speed.",
}


def _statuses(texts, stated, checks):
    findings, problems = check_card(texts, stated, checks)
    return {f.derived.number: f.status for f in findings}, problems


def test_each_derived_number_is_live_inline_checked_quoted_or_unchecked():
    statuses, problems = _statuses(SEED_TEXT, ["71"], [{"number": "5", "expr": "275.1 / 54.1"}])
    assert statuses == {"5": "checked", "5.1": "inline", "29": "unchecked", "71": "live"}
    assert problems == []
    quoted, _ = _statuses(SEED_TEXT, ["71"], [{"number": "29%", "source": "the course's lesson 03 run"}])
    assert quoted["29"] == "quoted"


def test_a_check_that_does_not_work_out_flags_its_number_as_wrong():
    statuses, problems = _statuses(SEED_TEXT, [], [{"number": "29%", "expr": "(1 - 38.9 / 54.9) * 100 + 1"}])
    assert statuses["29"] == "wrong"
    assert problems == ["check 29%: (1 - 38.9 / 54.9) * 100 + 1 is 30.1439, not 29%"]


def test_arithmetic_written_out_that_does_not_add_up_is_wrong():
    statuses, _ = _statuses({"more_detail": "so 18 x 1.42 = 26.6 ms with 8"}, [], [])
    assert statuses == {"26.6": "wrong"}


def test_a_check_whose_number_the_text_no_longer_writes_is_a_problem():
    _, problems = _statuses(SEED_TEXT, ["71"], [{"number": "30%", "source": "an old run"}])
    assert problems == ["check 30%: the card's text writes no such derived number"]


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ({"number": "5"}, "a list of checks"),
        (["5"], "each check is a mapping with a number"),
        ([{"number": "5"}], "give an expr to work it out from, or the source"),
        ([{"number": "5", "expr": "5", "why": "x"}], "unknown keys why"),
        ([{"number": "5", "expr": "5", "tolerance": 2}], "tolerance is a fraction"),
    ],
)
def test_a_list_of_checks_of_the_wrong_shape_is_named(entries, problem):
    assert problem in number_checks.shape_problem(entries)


# Every bundled card: what the test holds the content to.


def _bundled_cards() -> list[tuple[str, dict]]:
    cards = []
    for path in sorted(CONTENT_DIR.glob("*/lesson-*.yaml")):
        for card in yaml.safe_load(path.read_text(encoding="utf-8"))["cards"]:
            cards.append((f"{path.stem}/step-{card['step']}", card))
    return cards


def bundled_findings() -> tuple[list[tuple[str, number_checks.Finding]], list[str]]:
    findings, problems = [], []
    for name, card in _bundled_cards():
        texts = {field: str(card.get(field) or "") for field in Card.TEXT_FIELDS}
        stated = [str(row.get("stated", "")) for row in card.get("live_numbers") or []]
        found, card_problems = check_card(texts, stated, card.get("checks") or [])
        findings += [(name, finding) for finding in found]
        problems += [f"{name}: {problem}" for problem in card_problems]
    return findings, problems


def test_every_bundled_card_is_read():
    assert len(_bundled_cards()) == 73


def test_every_derived_number_in_the_bundled_cards_is_live_or_checked():
    findings, problems = bundled_findings()
    unchecked = [f"{name}: {finding.message()}" for name, finding in findings if not finding.covered]
    assert not problems, "\n".join(problems)
    assert not unchecked, f"{len(unchecked)} derived numbers neither live nor checked:\n" + "\n".join(
        unchecked
    )


def test_a_percentage_check_never_covers_the_same_digits_as_a_ratio():
    texts = {"plain_words": "Each step grows 6% per person; 8 people get about 6 times the tokens."}
    findings, problems = check_card(texts, [], [{"number": "6%", "source": "the practice server's rule"}])
    assert [(f.derived.kind, f.status) for f in findings] == [("N%", "quoted"), ("N times", "unchecked")]
    assert problems == []

"""Cards agree with their live figures, with each other and with the glossary.

Over the bundled content (lessons/content/), for every row of a card's "Computed live" panel:

- the number the card states is its live value to the digits the card prints ("Card says 78,000,000"
  beside a live 77,866,667 is a disagreement), unless the row's `note:` says why they differ;
- the card's own text writes that number, to the same digits, as the page shows it;
- rows that cite the same live figure in different cards state the same number.

And for the glossary: a number typed in a term's example, in the same unit as a number a card
listing that term states, may not be a near miss of it (275.1 tok/s beside a card's 276.3 tok/s):
the same quantity with two values. A figure cited from a table ({{measured.…}}, {{hw.…}}) names
its source, so only typed numbers are held to this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.utils.html import strip_tags

from felab_sim.engine.core.numbers import decimals_written, format_like, numbers_in, parse_number
from lessons.models import Card, GlossaryTerm

pytestmark = pytest.mark.django_db

_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
# A number with the unit a panel label ends with: "(tok/s)", "(GB)", "(%)".
_LABEL_UNIT = re.compile(r"\(([^()]+)\)\s*$")
# How a unit reads after a number in prose.
UNIT_WORDS = {
    "tok/s": r"(?:tok/s|tokens (?:a|per) second)",
    "GB": r"GB(?!/)",
    "MB": r"MB",
    "ms": r"ms",
    "%": r"%",
    "bits": r"bits",
}
NEAR_MISS = 0.03  # within 3% yet different at the digits written: the same quantity twice


@dataclass(frozen=True)
class Row:
    where: str
    label: str
    live_name: str
    stated: str
    live: str
    noted: bool


def _written_equal(a: str, b: str) -> bool:
    """Two numbers as printed are the same number to the digits of the less precise one: 77.2 and
    77.2, 71 and 70.7, 17.2 and 17.18; not 275.1 and 276.3, nor 78,000,000 and 77,866,667."""
    x, y = parse_number(a), parse_number(b)
    if x is None or y is None:
        return False
    dx, dy = decimals_written(a) or 0, decimals_written(b) or 0
    if dx == dy:
        return x == y
    coarse, fine, digits = (x, y, dx) if dx < dy else (y, x, dy)
    return abs(round(fine, digits) - coarse) < 1e-9


def row_problems(rows: list[Row], texts: dict[str, str]) -> list[str]:
    """Each panel row against its live value and its card's text, and rows of one live figure
    against each other. ``texts``: each card's text as the page shows it, by ``where``."""
    problems = []
    for row in rows:
        if parse_number(row.stated) is None:
            problems.append(f"{row.where}: {row.label}: the card states no number ({row.stated!r})")
            continue
        if not row.noted and not _written_equal(row.stated, row.live):
            problems.append(
                f"{row.where}: {row.label}: the card says {row.stated}, its live figure is {row.live} "
                "at the digits it prints"
            )
        text = texts.get(row.where, "")
        written = [m[0] for m in re.finditer(_NUMBER, text)]
        # The site prints tiny numbers as "7.5 × 10⁻⁵", which numbers_in reads.
        exact = parse_number(row.stated)
        if not any(_written_equal(row.stated, number) for number in written) and not any(
            value == exact for value in numbers_in(text)
        ):
            problems.append(f"{row.where}: {row.label}: the card says {row.stated}, its text never writes it")
    by_name: dict[str, list[Row]] = {}
    for row in rows:
        if not row.noted:  # a noted row states another figure beside the live one, on purpose
            by_name.setdefault(row.live_name, []).append(row)
    for name, same in by_name.items():
        if len({parse_number(row.stated) for row in same}) > 1:
            said = "; ".join(f"{row.where} says {row.stated}" for row in same)
            problems.append(f"{name}: one figure, several values: {said}")
    return problems


def _unit_of(label: str) -> str | None:
    match = _LABEL_UNIT.search(label)
    if match is None:
        return None
    unit = match[1].strip()
    return unit if unit in UNIT_WORDS else None


def glossary_problems(examples: dict[str, str], stated_by_term: dict[str, list[Row]]) -> list[str]:
    """Typed numbers in glossary examples that nearly, but not quite, equal what a card listing
    the term states in the same unit, and equal none of the figures it states in that unit.
    ``examples``: each term's example as written (placeholders unfilled, so cited figures are
    skipped)."""
    problems = []
    for term, example in examples.items():
        typed = re.sub(r"\{\{[^}]*\}\}", " ", example)
        rows = [
            row for row in stated_by_term.get(term, []) if _unit_of(row.label) and parse_number(row.stated)
        ]
        for unit in {_unit_of(row.label) for row in rows}:
            assert unit is not None
            in_unit = [row for row in rows if _unit_of(row.label) == unit]
            for match in re.finditer(rf"(?<![\w.,])({_NUMBER})\s*{UNIT_WORDS[unit]}", typed):
                if any(_written_equal(row.stated, match[1]) for row in in_unit):
                    continue  # one of the cards' own figures
                value = parse_number(match[1])
                assert value is not None
                near = [
                    row
                    for row in in_unit
                    if abs(value - parse_number(row.stated)) <= NEAR_MISS * abs(parse_number(row.stated))
                ]
                problems += [
                    f"glossary {term!r} says {match[0]}, {row.where} ({row.label}) says {row.stated}"
                    for row in near
                ]
    return problems


def _figure(card: Card, live: str) -> str:
    """What a panel row cites: a calculator's figure by name, a sweep's at the card's scenario."""
    return (
        live
        if live.startswith(("calc.", "measured."))
        else f"{card.scenario.slug if card.scenario else '-'}: sim.{live}"
    )


def _bundled_rows() -> tuple[list[Row], dict[str, str], dict[str, list[Row]]]:
    rows: list[Row] = []
    texts: dict[str, str] = {}
    by_term: dict[str, list[Row]] = {}
    cards = Card.objects.filter(published=True).select_related("lesson").order_by("lesson__number", "step")
    for card in cards:
        where = f"lesson {card.lesson.number:02d} step {card.step}"
        texts[where] = " ".join(strip_tags(html) for html in card.html.values())
        card_rows = [
            Row(
                where, row["label"], _figure(card, number.live), row["stated"], row["live"], bool(row["note"])
            )
            for row, number in zip(card.live_rows(), card.panel_numbers, strict=True)
        ]
        rows += card_rows
        for term in card.terms_in_order:
            by_term.setdefault(term.term, []).extend(card_rows)
    return rows, texts, by_term


def test_every_card_states_its_live_figures_to_the_digits_it_prints(lessons):
    rows, texts, _ = _bundled_rows()
    assert len(rows) > 100  # the bundled content was found
    assert not (problems := row_problems(rows, texts)), "\n".join(problems)


def test_the_glossary_gives_a_card_s_quantity_the_card_s_value(lessons):
    _, _, by_term = _bundled_rows()
    examples = {term.term: term.example for term in GlossaryTerm.objects.all()}
    assert not (problems := glossary_problems(examples, by_term)), "\n".join(problems)


# Planted examples: the disagreements the checks exist for.
CAPSTONE = Row(
    "lesson 15 step 1",
    "Crossover, one GPU (tickets a month)",
    "calc.x.crossover",
    "78,000,000",
    "77,866,667",
    False,
)


def test_a_rounded_stated_figure_beside_its_live_one_fails():
    problems = row_problems([CAPSTONE], {"lesson 15 step 1": "Dedicated wins above 77,866,667 tickets."})
    assert any("says 78,000,000, its live figure is 77,866,667" in p for p in problems)
    assert any("its text never writes it" in p for p in problems)


def test_one_figure_stated_two_ways_in_two_cards_fails():
    first = Row("lesson 03 step 1", "Total, 8 people (tok/s)", "c8.agg_tok_s", "275.1", "275.1", False)
    second = Row("lesson 03 step 2", "Total, 8 people (tok/s)", "c8.agg_tok_s", "276.3", "276.3", False)
    texts = {first.where: "275.1 in total", second.where: "276.3 in total"}
    problems = row_problems([first, second], texts)
    assert problems == [
        "c8.agg_tok_s: one figure, several values: lesson 03 step 1 says 275.1; lesson 03 step 2 says 276.3"
    ]


def test_a_glossary_near_miss_fails_and_a_cited_or_equal_figure_passes():
    row = Row("lesson 03 step 1", "Total, 8 people (tok/s)", "c8.agg_tok_s", "276.3", "276.3", False)
    planted = {"Throughput": "275.1 tokens per second in total at 8 people on the practice server."}
    assert glossary_problems(planted, {"Throughput": [row]}) == [
        "glossary 'Throughput' says 275.1 tokens per second, lesson 03 step 1 (Total, 8 people (tok/s)) says 276.3"
    ]
    fine = {
        "Throughput": "{{measured.practice-run.c8_agg_tok_s}} tokens per second in the course's run; 276.3 tok/s in the model."
    }
    assert glossary_problems(fine, {"Throughput": [row]}) == []


def test_the_panel_prints_live_values_with_the_stated_digits():
    # What the row check compares: the page prints the live value with the stated number's decimals.
    assert format_like(77_866_666.67, "78,000,000") == "77,866,667"
    assert format_like(276.34, "275.1") == "276.3"

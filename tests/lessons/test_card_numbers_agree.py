"""Every number a card states agrees with its own text and with what its page computes.

Run over every card in the bundled content (lessons/content/), so a card added or edited
there is checked the day it lands. For each row of a card's "Computed live" panel:

- the number the card states ("Card says") is the live value within the number's
  `tolerance:` (relative, default 2%), unless its `note:` says why they differ;
- the stated number is also written in the card's own text, as the page shows it (a
  live placeholder counts, since the page prints its value), within the same tolerance.

Tolerances and notes are read from the content files, where the card's author keeps them.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from felab_sim.engine.core.numbers import agrees, numbers_in, parse_number
from lessons.content_format import CONTENT_DIR
from tests.textutil import text_of

pytestmark = pytest.mark.django_db
DEFAULT_TOLERANCE = 0.02


def _bundled_cards() -> list[pytest.param]:
    found = []
    for path in sorted(CONTENT_DIR.glob("*/lesson-*.yaml")):
        lesson = yaml.safe_load(path.read_text(encoding="utf-8"))
        course = path.parent.name
        for card in lesson.get("cards") or []:
            url = f"/learn/{course}/{lesson['slug']}/step-{card['step']}/"
            found.append(
                pytest.param(url, card.get("live_numbers") or [], id=f"{path.stem}/step-{card['step']}")
            )
    return found


class _LiveTable(HTMLParser):
    """The rows of the page's "Computed live" table, as the text of their cells."""

    def __init__(self) -> None:
        super().__init__()
        self.in_table = False
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and "live-table" in (dict(attrs).get("class") or "").split():
            self.in_table = True
        elif self.in_table and tag == "tr":
            self.rows.append([])
        elif self.in_table and tag in {"td", "th"}:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.in_table = False
        elif self.in_table and tag in {"td", "th"} and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def live_rows(html: str) -> list[tuple[str, str, str]]:
    parser = _LiveTable()
    parser.feed(html)
    return [(row[0], row[1], row[2]) for row in parser.rows if len(row) == 3 and row[0] != "Number"]


def test_every_bundled_lesson_file_is_checked():
    assert len(_bundled_cards()) >= 3  # lesson 03's three steps at least: the glob finds the content


def live_number_problems(
    rows: list[tuple[str, str, str]], number_rows: list[dict], card_text: str
) -> list[str]:
    """What disagrees: each panel row (label, stated, live) against its file entry and the card's text."""
    written = numbers_in(card_text)
    problems = []
    for (label, stated_text, live_text), spec in zip(rows, number_rows, strict=True):
        tolerance = float(spec.get("tolerance", DEFAULT_TOLERANCE))
        stated, live = parse_number(stated_text), parse_number(live_text)
        if stated is None:
            problems.append(f"{label}: the card states no number ({stated_text!r})")
            continue
        if spec.get("note"):
            pass  # the author says why the stated number differs from the live one
        elif live is None:
            problems.append(f"{label}: the page computes nothing ({live_text!r})")
        elif not agrees(stated, live, tolerance):
            problems.append(f"{label}: the card says {stated_text}, the page computes {live_text}")
        if not any(agrees(stated, number, tolerance) for number in written):
            problems.append(f"{label}: the card says {stated_text}, but its text never writes that number")
    return problems


def test_every_bundled_card_states_its_numbers_as_its_text_and_page_compute_them(client, lessons):
    # One import of the bundled content for all cards: importing it per card is slow.
    problems = []
    for card in _bundled_cards():
        url, number_rows = card.values
        response = client.get(url, {"answer": "shown"})
        assert response.status_code == 200, url
        html = response.content.decode()
        rows = live_rows(html)
        if len(rows) != len(number_rows):
            problems.append(
                f"{url}: {len(rows)} Computed live rows for {len(number_rows)} live numbers in the file"
            )
            continue
        card_text = text_of(html, "card-question") + text_of(html, "answer-body")
        problems += [f"{url}: {problem}" for problem in live_number_problems(rows, number_rows, card_text)]
    assert not problems, "\n".join(problems)


STEP_2_TEXT = "Up to 8 people: the slowest 1 in 20 get their first token in 26 ms. 16 people: 3,344 ms."


@pytest.mark.parametrize(
    ("row", "spec", "problem"),
    [
        # Lesson 03 step 2's old panel: 41.4 (the course's measurement) beside a text saying 26.
        (("TTFT p95, 8 people", "41.4", "26"), {}, "the card says 41.4, the page computes 26"),
        (("TTFT p95, 8 people", "41.4", "26"), {}, "its text never writes that number"),
        (("Step time", "", "34.2"), {}, "the card states no number"),
        (("TTFT p95, 16 people", "3,357", "3,344"), {"tolerance": 0.001}, "the page computes 3,344"),
    ],
)
def test_the_check_finds_what_disagrees(row, spec, problem):
    assert any(problem in found for found in live_number_problems([row], [spec], STEP_2_TEXT))


@pytest.mark.parametrize(
    ("row", "spec"),
    [
        (("TTFT p95, 8 people", "26", "26"), {}),
        (("TTFT p95, 16 people", "3,357", "3,344"), {}),  # 0.4% apart: within the default 2%
        (("TTFT p95, 8 people", "41.4", "26"), {"note": "the course's measured run, not the model"}),
    ],
)
def test_the_check_accepts_agreement_tolerance_and_notes(row, spec):
    assert live_number_problems([row], [spec], STEP_2_TEXT + " The course measured 41.4 ms.") == []


def test_content_dir_is_the_bundled_one():
    assert Path(__file__).resolve().parents[2] / "lessons" / "content" == CONTENT_DIR

"""Every card's question can be read alone, weeks later, as spaced review shows it.

Review puts one question on the screen with no card before it, so a question that leans
on another card ("steps 1 and 2", "in the toy", "the previous card", "above") cannot be
answered there. Read straight from the bundled content files, so a card added or edited
in lessons/content/ is checked the day it lands.
"""

from __future__ import annotations

import re

import pytest
import yaml

from lessons.content_format import CONTENT_DIR

# Each pattern names a way a question can point outside itself.
REFERS_ELSEWHERE = {
    "another step": re.compile(r"\bsteps?\s+\d+", re.IGNORECASE),
    "another card": re.compile(
        r"\bcards?\s+\d+|\b(previous|earlier|last|next|other)\s+(card|step|question)s?\b", re.IGNORECASE
    ),
    "the toy": re.compile(r"\bthe\s+toy\b", re.IGNORECASE),
    "text above or below": re.compile(
        r"\b(above|below)\s*[.,:;)?]|\b(shown|given|listed|see|as|numbers|figures|table)\s+(above|below)\b",
        re.IGNORECASE,
    ),
    "the previous one": re.compile(r"\b(previous|preceding|as before)\b", re.IGNORECASE),
}


def _questions() -> list[pytest.param]:
    found = []
    for path in sorted(CONTENT_DIR.glob("*/lesson-*.yaml")):
        lesson = yaml.safe_load(path.read_text(encoding="utf-8"))
        for card in lesson.get("cards") or []:
            for field in ("question", "kit_question"):
                if card.get(field):
                    found.append(pytest.param(card[field], id=f"{path.stem}/step-{card['step']}/{field}"))
    return found


def references_elsewhere(question: str) -> list[str]:
    return [name for name, pattern in REFERS_ELSEWHERE.items() if pattern.search(question)]


def test_the_check_sees_the_bundled_questions():
    assert len(_questions()) >= 70 * 2


@pytest.mark.parametrize(
    "question",
    [
        "The knee sits at 8 people because it has 8 seats (steps 1 and 2). What moves it?",
        "In the toy, rank 1 stays at 0.13. Why?",
        "As the previous card showed, 86 tok/s is 77%. Is that good?",
        "Using the numbers above, how many replicas?",
        "See card 3: why does Q3_K_M slip?",
    ],
)
def test_the_check_catches_a_question_that_leans_on_another_card(question):
    assert references_elsewhere(question)


@pytest.mark.parametrize(
    "question",
    [
        "Validation loss fell: 0.412 after 50 steps, 0.198 after 100. Why score on test?",
        "Below 60% of the ceiling, what would you suspect?",
        "Why is the measured active share above the published one?",
        "On the same machine, a 117B MoE model types faster than a 70B dense one. How?",
    ],
)
def test_the_check_lets_a_self_contained_question_through(question):
    assert not references_elsewhere(question)


@pytest.mark.parametrize("question", _questions())
def test_no_question_refers_to_another_card(question):
    assert not references_elsewhere(question), f"refers to {references_elsewhere(question)}: {question}"

"""Every card's "In plain words" is plain (issue 20 item 4): the seed card's is two sentences and
36 words, with no formula and no jargon.

- at most 50 words (a live number counts as one);
- no formula: no =, ×, ÷, ^ or ≈, and no digits joined by an operator ("4 × 8,192", "10% + 45%");
- no term a student has not met: a glossary term (or one of its other forms) appears only once
  the card lists it under Words to know, or an earlier card in the course did.

Read from the bundled content files, in course order: no database needed.
"""

from __future__ import annotations

import re

import pytest
import yaml

from lessons.content_format import CONTENT_DIR

MAX_WORDS = 50
_LIVE = re.compile(r"\{\{[^}]*\}\}")
_FORMULA = re.compile(r"[=×÷^≈]|\d%?\s*[*/+]\s*\d|\d%?\s+[-−]\s+\d")
# Other ways the cards write a glossary term, beyond its name and its bracketed forms.
OTHER_FORMS = {
    "GB and GiB": ("KiB", "MiB", "GiB"),
    "Adam optimizer": ("optimizer",),
    "LoRA rank": ("rank",),
    "KL penalty (β)": ("KL penalty",),
}
# Words every card may use before any card lists them. "Token" is the course's first word: the
# first card's question explains it in passing, and lesson 01 lists it.
MET_BEFORE_ANY_CARD = frozenset({"Token"})


def words(text: str) -> int:
    return len(_LIVE.sub("number", text).split())


def formula_in(text: str) -> list[str]:
    return _FORMULA.findall(_LIVE.sub("", text))


def forms_of(term: str) -> list[str]:
    """A glossary term's ways of being written: "Time to first token (TTFT)" -> both halves."""
    match = re.fullmatch(r"(.*?)\s*\((.*)\)", term)
    found = [match[1], *match[2].split(", ")] if match else [term]
    return [form for form in found + list(OTHER_FORMS.get(term, ())) if form]


def _pattern(form: str) -> re.Pattern[str]:
    # Abbreviations and symbols match as written (TTFT, not "ttft" inside a word); words in any case.
    exact = form.isupper() or any(char.isdigit() for char in form) or not form.isascii()
    return re.compile(rf"(?<![\w-]){re.escape(form)}(?:s|es)?(?![\w-])", 0 if exact else re.IGNORECASE)


def terms_in(text: str, glossary: list[str]) -> set[str]:
    text = _LIVE.sub("", text)
    return {term for term in glossary if any(_pattern(form).search(text) for form in forms_of(term))}


def _glossary() -> list[str]:
    return [entry["term"] for entry in yaml.safe_load((CONTENT_DIR / "glossary.yaml").read_text())]


def _cards_in_course_order() -> list[tuple[str, dict]]:
    lessons = [yaml.safe_load(path.read_text()) for path in sorted(CONTENT_DIR.glob("*/lesson-*.yaml"))]
    lessons.sort(key=lambda lesson: (lesson.get("order", lesson["number"]), lesson["number"]))
    return [
        (f"lesson {lesson['number']:02d} step {card['step']}", card)
        for lesson in lessons
        for card in lesson["cards"]
    ]


def unmet_terms(cards: list[tuple[str, dict]], glossary: list[str]) -> list[str]:
    met = set(MET_BEFORE_ANY_CARD)
    found = []
    for name, card in cards:
        own = set(card.get("terms") or [])
        if unmet := terms_in(card["plain_words"], glossary) - own - met:
            found.append(f"{name}: {', '.join(sorted(unmet))}")
        met |= own
    return found


def test_every_cards_plain_words_are_at_most_50_words():
    long = [f"{name}: {words(card['plain_words'])} words" for name, card in _cards_in_course_order()
            if words(card["plain_words"]) > MAX_WORDS]  # fmt: skip
    assert long == []


def test_no_cards_plain_words_hold_a_formula():
    found = [f"{name}: {formula_in(card['plain_words'])}" for name, card in _cards_in_course_order()
             if formula_in(card["plain_words"])]  # fmt: skip
    assert found == []


def test_plain_words_use_only_terms_met_on_the_card_or_before_it():
    assert unmet_terms(_cards_in_course_order(), _glossary()) == []


@pytest.mark.parametrize(
    "text",
    [
        "start the server with 4 × 8,192 = 32,768",  # lesson 02 step 1, once
        "10% + 45% = 55% of the old input bill",  # lesson 06 step 3, once
        "2*3 bytes",
        "x^2",
        "1,000 ÷ 18",
        "54.9 - 38.9 tokens",
    ],
)
def test_a_formula_is_found(text):
    assert formula_in(text)


@pytest.mark.parametrize(
    "text",
    [
        "inside the 60–85% that real runs reach",
        "an 8-bit copy",
        "{{calc.l15-h100-70b-f16.model_gb}} GB",
        "3.6B of 21B",
    ],
)
def test_ranges_hyphens_and_live_numbers_are_not_formulas(text):
    assert formula_in(text) == []


def test_words_count_a_live_number_as_one():
    assert words("Only {{calc.l15-h100-70b-q4.model_gb}} GB at about 4.8 bits.") == 7


def test_a_term_counts_as_met_from_its_card_on_and_in_any_of_its_forms():
    glossary = ["Time to first token (TTFT)", "GB and GiB", "Layer"]
    cards = [
        ("first", {"plain_words": "The TTFT is long.", "terms": []}),
        ("second", {"plain_words": "It takes 128 KiB per layer.", "terms": ["Time to first token (TTFT)"]}),
        ("third", {"plain_words": "The time to first token and the layers.", "terms": ["Layer"]}),
    ]
    assert unmet_terms(cards, glossary) == ["first: Time to first token (TTFT)", "second: GB and GiB, Layer"]

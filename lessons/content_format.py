"""The layout of lesson content as YAML files, so instructors can keep lessons in git.

lessons/content_import.py reads these files into the database; lessons/content_export.py writes
them back out. What both must agree on lives here: where the files are, the keys each holds, and
what a card or practice template looks like as its file holds it.

Layout under a content directory:

    glossary.yaml                     every word to know: term, definition, example
    scenarios.yaml                    simulator scenarios that cards cite by slug
    parameter_sets.yaml               calculators' named parameter sets ({{calc.SLUG.OUTPUT}})
                                      (these two are felab_sim's: lessons/content_sections.py)
    <course-slug>/course.yaml         the course: slug, title, description, order
    <course-slug>/lesson-NN-<slug>.yaml  one lesson and its cards, in step order
    <course-slug>/practice-NN-<lesson-slug>.yaml  its practice templates (below), each with the
                                      mistakes instructors named from the class's answers

Cards name their glossary terms in the order the card lists them, their scenario by
slug, the live numbers of their "Computed live" panel (`live_numbers:`), and the checks of the numbers their text
works out (`checks:`, see lessons/number_checks.py). A lesson may carry an `intro`
(Markdown) and `minutes`; a lesson or card is published unless it says `published: false`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import number_checks
from .models import Card, CardNumber, Lesson, PracticeTemplate

CONTENT_DIR = Path(__file__).resolve().parent / "content"

COURSE_FIELDS = ("title", "description", "order")
LESSON_FIELDS = ("number", "title", "order", "intro", "minutes", "published")
TERM_FIELDS = ("definition", "example")
LIVE_NUMBER_FIELDS = ("label", "live", "stated")
CARD_FIELDS = ("title", *Card.TEXT_FIELDS)


def field_values(obj: Any, names: Iterable[str]) -> dict[str, Any]:
    """An object's values of the named fields, keyed by name: a file entry's part of a row."""
    return {name: getattr(obj, name) for name in names}


def card_values(card: Card) -> dict[str, Any]:
    """A card as its file holds it: text, scenario by slug, live numbers and terms in order."""
    return {
        **field_values(card, CARD_FIELDS),
        "published": card.published,
        "scenario": card.scenario.slug if card.scenario else None,
        "live_numbers": [
            _live_number_entry(row) for row in sorted(card.numbers.all(), key=lambda n: n.order)
        ],
        "terms": [ct.term.term for ct in sorted(card.card_terms.all(), key=lambda ct: ct.order)],
        "checks": [number_checks.in_written_order(row) for row in card.number_checks or []],
    }


def _live_number_entry(number: CardNumber) -> dict[str, Any]:
    entry = field_values(number, LIVE_NUMBER_FIELDS)
    if number.tolerance is not None:
        entry["tolerance"] = number.tolerance
    if number.note:
        entry["note"] = number.note
    return entry


# Practice templates, one file per lesson beside its cards:
#     <course-slug>/practice-NN-<lesson-slug>.yaml   lesson: <lesson-slug>, templates: [...]
# Each template's keys are written in PRACTICE_FIELDS' order, optional ones only when they differ
# from their default, so an export reproduces the file byte for byte; a template its calculator
# cannot draw is refused with felab_sim.engine.problems.drills' reason, naming the file and the slug.
# After them, `class_mistakes:`, only where instructors named some from the class's answers
# (quiz.ClassMistake, lessons/class_mistakes.py): each a slug, says and formula, oldest first,
# read back through the admin's checks and refused with its reason, naming the file, the template
# and the mistake.

PRACTICE_FILE_GLOB = "practice-*.yaml"
CLASS_MISTAKES_KEY = "class_mistakes"
PRACTICE_TEXT_FIELDS = ("question", "hint", "solution")
# In file order; each optional one is written only when it differs from its default.
PRACTICE_FIELDS = ("title", "published", "calculator", "output", "asks", "question", "draws", "fixed", "change",
          "tolerance", "unit", "hint", "solution", "mistakes")  # fmt: skip
PRACTICE_DEFAULTS: dict[str, Any] = {"published": True, "asks": "value", "fixed": {}, "change": {}, "tolerance": 0.1,
                            "unit": "", "hint": "", "solution": "", "mistakes": []}  # fmt: skip


def practice_file_name(lesson: Lesson) -> str:
    return f"practice-{lesson.number:02d}-{lesson.slug}.yaml"


def template_values(template: PracticeTemplate) -> dict[str, Any]:
    """A template as its file holds it (what the import compares against)."""
    return {
        "order": template.order,
        "lesson": template.lesson.slug,
        **{n: getattr(template, n) for n in PRACTICE_FIELDS},
    }

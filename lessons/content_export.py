"""Writing the database's lesson content to YAML files (their layout: lessons/content_format.py).

Keys are written in file order and optional ones only when set, so exporting what the bundled
files imported reproduces them byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.problems.mistakes import KEYS as MISTAKE_KEYS

from . import class_mistakes
from .content_format import (
    CARD_FIELDS,
    CLASS_MISTAKES_KEY,
    CONTENT_DIR,
    PRACTICE_DEFAULTS,
    PRACTICE_FIELDS,
    card_values,
    practice_file_name,
)
from .content_sections import installed_sections
from .markdown import normalise_line_ends
from .models import Card, Course, GlossaryTerm, Lesson, PracticeTemplate


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line text as YAML block scalars, so diffs read like the lesson."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # A \r (from a text area saved before line breaks were normalised) would force a quoted string.
    value = normalise_line_ends(value)
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def _dump(data: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(data, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False, width=10_000)
    path.write_text(text, encoding="utf-8")


def export_content(directory: Path = CONTENT_DIR) -> list[Path]:
    """Write every course, lesson, card and term to YAML files; returns the files written."""
    written: list[Path] = []
    glossary = [
        {"term": t.term, "definition": t.definition, "example": t.example}
        for t in GlossaryTerm.objects.order_by("term")
    ]
    _dump(glossary, directory / "glossary.yaml")
    written.append(directory / "glossary.yaml")
    for section in installed_sections():
        if entries := section.export_entries():
            _dump(entries, directory / section.file_name)
            written.append(directory / section.file_name)
    courses = Course.objects.prefetch_related("lessons__cards__card_terms__term", "lessons__cards__numbers")
    for course in courses.prefetch_related("lessons__cards__scenario"):
        course_dir = directory / course.slug
        _dump({"slug": course.slug, "title": course.title, "description": course.description,
               "order": course.order}, course_dir / "course.yaml")  # fmt: skip
        written.append(course_dir / "course.yaml")
        for lesson in course.lessons.all():
            cards = [_card_entry(card) for card in sorted(lesson.cards.all(), key=lambda c: c.step)]
            path = course_dir / f"lesson-{lesson.number:02d}-{lesson.slug}.yaml"
            _dump({**_lesson_entry(lesson), "cards": cards}, path)
            written.append(path)
        written += _export_practice_files(course, course_dir)
    return written


def _lesson_entry(lesson: Lesson) -> dict[str, Any]:
    """A lesson's own keys; optional ones only when set, so files that omit them export unchanged."""
    entry: dict[str, Any] = {"number": lesson.number, "slug": lesson.slug, "title": lesson.title,
                             "order": lesson.order}  # fmt: skip
    if lesson.intro:
        entry["intro"] = lesson.intro
    if lesson.minutes is not None:
        entry["minutes"] = lesson.minutes
    if not lesson.published:
        entry["published"] = False
    return entry


def _card_entry(card: Card) -> dict[str, Any]:
    """A card's keys in file order, from the same values the import compares against."""
    values = card_values(card)
    entry: dict[str, Any] = {"step": card.step}
    if not values["published"]:
        entry["published"] = False
    entry.update({name: values[name] for name in CARD_FIELDS})
    if values["scenario"]:
        entry["scenario"] = values["scenario"]
    if values["live_numbers"]:
        entry["live_numbers"] = values["live_numbers"]
    entry["terms"] = values["terms"]
    if values["checks"]:
        entry["checks"] = values["checks"]
    return entry


def _export_practice_files(course: Course, course_dir: Path) -> list[Path]:
    """One file per lesson that has templates; returns the files written."""
    written = []
    templates = PracticeTemplate.objects.filter(lesson__course=course).select_related("lesson")
    by_lesson: dict[Lesson, list[PracticeTemplate]] = {}
    for template in templates.order_by("lesson__order", "lesson__number", "order", "slug"):
        by_lesson.setdefault(template.lesson, []).append(template)
    for lesson, rows in by_lesson.items():
        path = course_dir / practice_file_name(lesson)
        _dump({"lesson": lesson.slug, "templates": [_practice_entry(t) for t in rows]}, path)
        written.append(path)
    return written


# PostgreSQL's jsonb keeps no key order (it sorts keys shortest first), so a template's mappings
# are written in one order of their own: a draw's keys as below, a calculator's inputs in the
# order the calculator declares its parameters.
_DRAW_KEYS = ("name", "values", "presets", "range", "log", "step")
_PRESET_KEYS = ("label", "inputs")


def _ordered(mapping: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    rank = {key: index for index, key in enumerate(order)}
    return {key: mapping[key] for key in sorted(mapping, key=lambda key: (rank.get(key, len(rank)), key))}


def _in_file_order(name: str, value: Any, param_order: tuple[str, ...]) -> Any:
    if name in ("fixed", "change"):
        return _ordered(value, param_order)
    if name == "mistakes":
        return [_ordered(m, MISTAKE_KEYS) if isinstance(m, dict) else m for m in value]
    if name != "draws":
        return value
    draws = []
    for draw in value:
        draw = _ordered(draw, _DRAW_KEYS)
        if "presets" in draw:
            draw["presets"] = [
                {**_ordered(preset, _PRESET_KEYS), "inputs": _ordered(preset["inputs"], param_order)}
                if isinstance(preset.get("inputs"), dict)
                else _ordered(preset, _PRESET_KEYS)
                for preset in draw["presets"]
            ]
        draws.append(draw)
    return draws


def _practice_entry(template: PracticeTemplate) -> dict[str, Any]:
    entry: dict[str, Any] = {"slug": template.slug}
    calculator = CALCULATORS.get(template.calculator)
    param_order = tuple(param.name for param in calculator.params) if calculator else ()
    for name in PRACTICE_FIELDS:
        value = getattr(template, name)
        if name in PRACTICE_DEFAULTS and value == PRACTICE_DEFAULTS[name]:
            continue
        entry[name] = _in_file_order(name, value, param_order)
    if named := class_mistakes.entries_of(template):
        entry[CLASS_MISTAKES_KEY] = named
    return entry

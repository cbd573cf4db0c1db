"""Practice templates as YAML, one file per lesson beside its cards.

    <course-slug>/practice-NN-<lesson-slug>.yaml   lesson: <lesson-slug>, templates: [...]

Each template lists its keys in the order below, optional ones only when set, so an export
reproduces the file byte for byte. ``import_lessons`` reads them after the lessons, refusing a
template its calculator cannot draw (felab_sim.engine.drills says why), and reports a field an
instructor edited since the last import as a conflict, as it does for cards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import content_files as files
from .models import Course, Lesson, PracticeTemplate

FILE_GLOB = "practice-*.yaml"
TEXT_FIELDS = ("question", "hint", "solution")
# In file order; each optional one is written only when it differs from its default.
FIELDS = ("title", "published", "calculator", "output", "asks", "question", "draws", "fixed", "change",
          "tolerance", "unit", "hint", "solution")  # fmt: skip
DEFAULTS: dict[str, Any] = {"published": True, "asks": "value", "fixed": {}, "change": {}, "tolerance": 0.1,
                            "unit": "", "hint": "", "solution": ""}  # fmt: skip


def file_name(lesson: Lesson) -> str:
    return f"practice-{lesson.number:02d}-{lesson.slug}.yaml"


def template_values(template: PracticeTemplate) -> dict[str, Any]:
    """A template as its file holds it (what the import compares against)."""
    return {
        "order": template.order,
        "lesson": template.lesson.slug,
        **{n: getattr(template, n) for n in FIELDS},
    }


def import_file(course: Course, path: Path, merger: Any) -> None:
    data = files._load(path)
    lesson_slug = str(files._require(data, "lesson", path))
    lesson = Lesson.objects.filter(course=course, slug=lesson_slug).first()
    if lesson is None:
        raise files.ContentError(f"{path}: no lesson '{lesson_slug}' in course {course.slug}")
    for order, entry in enumerate(files._require(data, "templates", path) or [], start=1):
        _import_template(lesson, order, entry, path, merger)


def _import_template(lesson: Lesson, order: int, entry: Any, path: Path, merger: Any) -> None:
    slug = str(files._require(entry, "slug", path))
    values: dict[str, Any] = {"order": order, "lesson": lesson.slug}
    for name in FIELDS:
        value = entry.get(name, DEFAULTS.get(name))
        if value is None:
            raise files.ContentError(f"{path}: template {slug}: missing '{name}'")
        values[name] = files._text(entry, name) if name in TEXT_FIELDS else value
    values["published"] = files._published(entry, path)
    template = PracticeTemplate.objects.filter(slug=slug).select_related("lesson").first()
    created = template is None
    template = template or PracticeTemplate(slug=slug, lesson=lesson)
    to_write = merger.merge(f"practice {slug}", created, values, {} if created else template_values(template))
    if "lesson" in to_write:
        to_write.pop("lesson")
        to_write["lesson"] = lesson
    candidate = PracticeTemplate(**{**_model_values(template), **to_write})
    if problems := candidate.problems():
        reasons = "; ".join(f"{problem.field}: {problem.message}" for problem in problems)
        raise files.ContentError(f"{path}: template {slug}: {reasons}")
    files._write_fields(template, to_write, created)


def _model_values(template: PracticeTemplate) -> dict[str, Any]:
    return {"slug": template.slug, "lesson": template.lesson, **{n: getattr(template, n) for n in FIELDS}}


def export_files(course: Course, course_dir: Path) -> list[Path]:
    """One file per lesson that has templates; returns the files written."""
    written = []
    templates = PracticeTemplate.objects.filter(lesson__course=course).select_related("lesson")
    by_lesson: dict[Lesson, list[PracticeTemplate]] = {}
    for template in templates.order_by("lesson__order", "lesson__number", "order", "slug"):
        by_lesson.setdefault(template.lesson, []).append(template)
    for lesson, rows in by_lesson.items():
        path = course_dir / file_name(lesson)
        files._dump({"lesson": lesson.slug, "templates": [_entry(t) for t in rows]}, path)
        written.append(path)
    return written


def _entry(template: PracticeTemplate) -> dict[str, Any]:
    entry: dict[str, Any] = {"slug": template.slug}
    for name in FIELDS:
        value = getattr(template, name)
        if name in DEFAULTS and value == DEFAULTS[name]:
            continue
        entry[name] = value
    return entry

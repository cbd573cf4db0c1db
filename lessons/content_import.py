"""Reading lesson content files into the database (their layout: lessons/content_format.py).

Matching is by natural key. Each import remembers the values it wrote (ImportBaseline), so the
next one can tell an instructor's edit in the database from a stale row: an edited field is kept
and reported as a Conflict unless forced. A file that cannot be imported (not YAML, the wrong
shape, a number its card cannot cite, a template its calculator cannot draw) is refused with a
ContentError naming the file and the reason, and the whole import is rolled back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from felab_sim.engine.course import citations, facts, live_numbers

from . import class_mistakes, number_checks
from .card_citations import is_measured_number
from .content_format import (
    CLASS_MISTAKES_KEY,
    CONTENT_DIR,
    COURSE_FIELDS,
    LESSON_FIELDS,
    LIVE_NUMBER_FIELDS,
    PRACTICE_DEFAULTS,
    PRACTICE_FIELDS,
    PRACTICE_FILE_GLOB,
    PRACTICE_TEXT_FIELDS,
    TERM_FIELDS,
    card_values,
    field_values,
    template_values,
)
from .content_sections import SectionFile, installed_sections
from .markdown import as_written_and_shown, live_number_markup_problems, normalise_line_ends
from .models import (
    Card,
    CardNumber,
    CardTerm,
    Course,
    GlossaryTerm,
    ImportBaseline,
    Lesson,
    PracticeTemplate,
)
from .simulator import simulator


class ContentError(ValueError):
    """A content file that cannot be imported, with the file and the reason."""


@dataclass(frozen=True)
class Conflict:
    """A field that both an edit in the database and the files changed since the last import."""

    label: str
    field: str
    database: Any
    file: Any

    def diff(self) -> list[str]:
        """What the database changed from the file's value, in a few short lines."""
        return short_diff(self.file, self.database)


# A conflict names the changed words with this much of their line around them.
DIFF_CONTEXT_CHARS = 40
DIFF_CHANGE_CHARS = 240
DIFF_MAX_LINES = 12


def short_diff(file: Any, database: Any) -> list[str]:
    """The lines that differ between a file's value and the database's, each cut down to the
    changed words and a little context: a one-paragraph edit reads as two short lines, not as
    both whole texts. Lists (terms, live numbers) compare item by item."""
    if isinstance(file, str) and isinstance(database, str):
        old, new = file.split("\n"), database.split("\n")
        numbered = len(old) > 1 or len(new) > 1
    elif isinstance(file, list) and isinstance(database, list):
        old, new = [repr(item) for item in file], [repr(item) for item in database]
        numbered = True
    else:
        return [f"- file:     {file!r}", f"+ database: {database!r}"]
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if numbered:
            lines.append(f"@@ {_where(i1, i2)} @@")
        removed, added = old[i1:i2], new[j1:j2]
        if len(removed) == len(added):
            pairs = [_clip_pair(a, b) for a, b in zip(removed, added, strict=True)]
            removed, added = [a for a, _ in pairs], [b for _, b in pairs]
        else:
            removed, added = [_clip(a, 0, len(a)) for a in removed], [_clip(b, 0, len(b)) for b in added]
        lines += [f"- file:     {line}" for line in removed] + [f"+ database: {line}" for line in added]
    if len(lines) > DIFF_MAX_LINES:
        lines = [*lines[:DIFF_MAX_LINES], f"… {len(lines) - DIFF_MAX_LINES} more lines differ"]
    return lines


def _where(start: int, stop: int) -> str:
    """Lines start to stop (from 0, stop excluded) of the file's value, as a person counts them."""
    if stop == start:
        return f"after file line {start}" if start else "before file line 1"
    return f"file line {stop}" if stop - start == 1 else f"file lines {start + 1}-{stop}"


def _clip_pair(a: str, b: str) -> tuple[str, str]:
    """Two versions of a line, each cut to the part that differs and the words around it."""
    start = _common_length(a, b)
    end = _common_length(a[start:][::-1], b[start:][::-1])
    return _clip(a, start, len(a) - end), _clip(b, start, len(b) - end)


def _common_length(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def _clip(text: str, start: int, stop: int) -> str:
    begin = max(0, start - DIFF_CONTEXT_CHARS)
    stop = min(stop, start + DIFF_CHANGE_CHARS)
    end = min(len(text), stop + DIFF_CONTEXT_CHARS)
    return ("…" if begin else "") + text[begin:end] + ("…" if end < len(text) else "")


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged: int = 0

    def summary(self) -> str:
        return (
            f"{len(self.created)} created, {len(self.updated)} updated, {self.unchanged} unchanged, "
            f"{len(self.conflicts)} conflicts"
        )


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Bounds on what one content file may hold. The bundled files are under 30 KB with no text over
# 2,000 characters; the bounds leave room for far longer lessons while refusing a file that would
# take the import minutes and the database megabytes (or a page served to every student).
MAX_FILE_BYTES = 1 << 20
MAX_FIELD_CHARS = 20_000
MAX_NESTING = 20


def _load(path: Path) -> Any:
    """The file's YAML, after checks that keep a hostile file cheap to refuse.

    Anchors and aliases are refused: a few hundred bytes of nested aliases expand to gigabytes
    ("billion laughs"), and lesson files have no use for them.
    """
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ContentError(f"{path}: {size:,} bytes, over the limit of {MAX_FILE_BYTES:,}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ContentError(
            f"{path}: line {line}: not UTF-8 (byte 0x{raw[error.start]:02x}); save the file as UTF-8"
        ) from None
    try:
        _check_events(text, path)
        # libyaml's C loader when PyYAML has it (its wheels do): ten times the pure-Python one.
        return yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        raise ContentError(f"{path}:{where} not valid YAML ({error})") from None


def _check_events(text: str, path: Path) -> None:
    """Refuse aliases, anchors, deep nesting and overlong values, by line, before building anything."""
    depth = 0
    for event in yaml.parse(text, Loader=_SAFE_LOADER):
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise ContentError(
                f"{path}: line {line}: YAML anchors and aliases (&name, *name) are not accepted; "
                "write the value out in full"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise ContentError(f"{path}: line {line}: nested more than {MAX_NESTING} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_FIELD_CHARS:
            raise ContentError(
                f"{path}: line {line}: a value of {len(event.value):,} characters, over the limit "
                f"of {MAX_FIELD_CHARS:,}"
            )


def _require(data: Any, key: str, path: Path) -> Any:
    if not isinstance(data, dict) or key not in data:
        raise ContentError(f"{path}: missing '{key}'")
    return data[key]


# A field with no recorded import holds whatever the database had before baselines were
# kept; an import only fills it when it is empty, so an edit from those days is never lost.
_EMPTY_VALUES: tuple[Any, ...] = ("", None, [])


class _Merger:
    """One import run: what to write for each object, from the files, the database and the last import."""

    def __init__(self, force: bool) -> None:
        self.force = force
        self.report = ImportReport()
        self._baselines = dict(ImportBaseline.objects.values_list("key", "values"))

    def merge(
        self, label: str, created: bool, file_values: dict[str, Any], db_values: dict[str, Any]
    ) -> dict[str, Any]:
        """The file's values to write. A field edited in the database since the last import is
        kept and reported as a conflict, unless forced."""
        last = self._baselines.get(label)
        to_write: dict[str, Any] = {}
        baseline: dict[str, Any] = {}
        for name, file_value in file_values.items():
            db_value = None if created else _comparable(db_values[name])
            if not created and db_value == file_value:
                baseline[name] = file_value
            elif created or self.force or _unedited(db_value, last, name):
                to_write[name] = baseline[name] = file_value
            else:
                self.report.conflicts.append(Conflict(label, name, db_value, file_value))
                if last is not None and name in last:
                    baseline[name] = last[name]
        self._remember(label, baseline)
        if created:
            self.report.created.append(label)
        elif to_write:
            self.report.updated.append(label)
        else:
            self.report.unchanged += 1
        return to_write

    def _remember(self, label: str, baseline: dict[str, Any]) -> None:
        if self._baselines.get(label) == baseline:
            return
        # Every stored baseline was read at the start of the run, so whether this one exists is
        # known: one write, not update_or_create's read and write.
        if label in self._baselines:
            ImportBaseline.objects.filter(key=label).update(values=baseline)
        else:
            ImportBaseline.objects.create(key=label, values=baseline)
        self._baselines[label] = baseline


def _comparable(value: Any) -> Any:
    # A text saved from a browser before line breaks were normalised holds \r\n: the same text.
    return normalise_line_ends(value) if isinstance(value, str) else value


def _unedited(db_value: Any, last: dict[str, Any] | None, name: str) -> bool:
    if last is not None and name in last:
        return db_value == last[name]
    return db_value in _EMPTY_VALUES


def _write_fields(obj: Any, to_write: dict[str, Any], created: bool) -> None:
    for name, value in to_write.items():
        setattr(obj, name, value)
    if created or to_write:
        obj.save()


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name, "")
    return "" if value is None else normalise_line_ends(str(value)).rstrip("\n")


@transaction.atomic
def import_content(directory: Path = CONTENT_DIR, *, force: bool = False) -> ImportReport:
    """Create what is missing and update what still holds the last import's values.

    Matching is by natural key. A field an instructor edited since the last import is
    left as it is and reported as a conflict; force takes the file's value instead.
    """
    if not directory.is_dir():
        raise ContentError(f"{directory}: no such content directory")
    merger = _Merger(force)
    with _reading(directory / "glossary.yaml"):
        terms = _import_glossary(directory / "glossary.yaml", merger)
    linked: dict[str, dict[str, Any]] = {}
    for section in installed_sections():
        with _reading(directory / section.file_name):
            linked[section.file_name] = _import_section(section, directory / section.file_name, merger)
    scenarios = linked.get("scenarios.yaml", {})
    for course_path in sorted(directory.glob("*/course.yaml")):
        with _reading(course_path):
            course = _import_course(course_path, merger)
        for lesson_path in sorted(course_path.parent.glob("lesson-*.yaml")):
            with _reading(lesson_path):
                _import_lesson(course, lesson_path, terms, scenarios, merger)
        for practice_path in sorted(course_path.parent.glob(PRACTICE_FILE_GLOB)):
            with _reading(practice_path):
                _import_practice_file(course, practice_path, merger)
    return merger.report


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Name the file when its data has the wrong shape (a list for a mapping, a word for a number)."""
    try:
        yield
    except ContentError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as error:
        raise ContentError(
            f"{path}: not lesson content as expected ({type(error).__name__}: {error})"
        ) from error


def _import_glossary(path: Path, merger: _Merger) -> dict[str, GlossaryTerm]:
    terms: dict[str, GlossaryTerm] = {}
    if not path.exists():
        return terms
    for entry in _load(path) or []:
        name = str(_require(entry, "term", path))
        term = GlossaryTerm.objects.filter(term=name).first()
        created = term is None
        term = term or GlossaryTerm(term=name)
        values = {name_: _text(entry, name_) for name_ in TERM_FIELDS}
        problems = facts.problems(values.values())
        problems += [problem for text in values.values() for problem in live_number_markup_problems(text)]
        if problems:
            raise ContentError(f"{path}: term {name}: {'; '.join(problems)}")
        to_write = merger.merge(f"term {name}", created, values, field_values(term, TERM_FIELDS))
        _write_fields(term, to_write, created)
        terms[name] = term
    return terms


def _import_section(section: Any, path: Path, merger: _Merger) -> dict[str, Any]:
    if not path.exists():
        return {}

    def merge(label: str, row: Any, created: bool, values: dict[str, Any]) -> None:
        _write_fields(row, merger.merge(label, created, values, field_values(row, values)), created)

    file = SectionFile(
        path=path,
        entries=_load(path) or [],
        require=lambda data, key: _require(data, key, path),
        text=_text,
        merge=merge,
        content_error=ContentError,
    )
    return section.import_file(file)


def _import_course(path: Path, merger: _Merger) -> Course:
    data = _load(path)
    slug = str(_require(data, "slug", path))
    values = {"title": str(_require(data, "title", path)), "description": _text(data, "description"),
              "order": int(data.get("order", 0))}  # fmt: skip
    course = Course.objects.filter(slug=slug).first()
    created = course is None
    course = course or Course(slug=slug)
    to_write = merger.merge(f"course {slug}", created, values, field_values(course, COURSE_FIELDS))
    _write_fields(course, to_write, created)
    return course


def _import_lesson(
    course: Course,
    path: Path,
    terms: dict[str, GlossaryTerm],
    scenarios: dict[str, Any],
    merger: _Merger,
) -> None:
    data = _load(path)
    slug = str(_require(data, "slug", path))
    number = int(_require(data, "number", path))
    values = {
        "number": number,
        "title": str(_require(data, "title", path)),
        "order": int(data.get("order", number)),
        "intro": _text(data, "intro"),
        "minutes": _minutes(data.get("minutes"), path),
        "published": _published(data, path),
    }
    lesson = Lesson.objects.filter(course=course, slug=slug).first()
    created = lesson is None
    lesson = lesson or Lesson(course=course, slug=slug)
    label = f"lesson {course.slug}/{slug}"
    _write_fields(lesson, merger.merge(label, created, values, field_values(lesson, LESSON_FIELDS)), created)

    for card_data in _require(data, "cards", path) or []:
        _import_card(lesson, card_data, path, terms, scenarios, merger)


def _import_card(
    lesson: Lesson,
    card_data: dict[str, Any],
    path: Path,
    terms: dict[str, GlossaryTerm],
    scenarios: dict[str, Any],
    merger: _Merger,
) -> None:
    step = int(_require(card_data, "step", path))
    values: dict[str, Any] = {"title": str(_require(card_data, "title", path))}
    values.update({name: _text(card_data, name) for name in Card.TEXT_FIELDS})
    values["published"] = _published(card_data, path)
    values["scenario"] = _scenario_slug(card_data.get("scenario"), scenarios, path, step)
    _refuse_old_keys(card_data, path, step)
    values["live_numbers"] = [
        _live_number_row(row, path, step) for row in card_data.get("live_numbers") or []
    ]
    values["terms"] = [str(name) for name in card_data.get("terms") or []]
    values["checks"] = [_check_row(row, path, step) for row in card_data.get("checks") or []]
    for name in values["terms"]:
        if name not in terms:
            raise ContentError(f"{path}: card step {step} names unknown glossary term '{name}'")
    _check_live_numbers(values, scenarios, path, step)

    card = Card.objects.filter(lesson=lesson, step=step).first()
    created = card is None
    card = card or Card(lesson=lesson, step=step)
    label = f"card {lesson.course.slug}/{lesson.slug}/{step}"
    to_write = merger.merge(label, created, values, {} if created else card_values(card))
    number_rows = to_write.pop("live_numbers", None)
    term_names = to_write.pop("terms", None)
    if "checks" in to_write:
        to_write["number_checks"] = to_write.pop("checks")
    if "scenario" in to_write:
        slug = to_write.pop("scenario")
        card.scenario = scenarios[slug] if slug else None
        to_write["scenario_id"] = card.scenario_id  # saved with the fields below
    _write_fields(card, to_write, created)
    if number_rows is not None:
        card.numbers.all().delete()
        CardNumber.objects.bulk_create(
            CardNumber(card=card, order=index, **row) for index, row in enumerate(number_rows, start=1)
        )
    if term_names is not None:
        card.card_terms.all().delete()
        CardTerm.objects.bulk_create(
            CardTerm(card=card, term=terms[name], order=index)
            for index, name in enumerate(term_names, start=1)
        )


def _check_row(row: Any, path: Path, step: int) -> dict[str, Any]:
    """A check of a derived number from a file, its keys in the order export writes them.

    Only its shape is refused here; whether its expression works out is the admin's warning and
    tests/lessons/test_number_checks.py's business, so an import never fails on arithmetic.
    """
    if isinstance(row, dict):
        row = {key: value if isinstance(value, int | float) and key == "tolerance" else str(value)
               for key, value in row.items() if value is not None}  # fmt: skip
    if problem := number_checks.shape_problem([row]):
        raise ContentError(f"{path}: card step {step}: {problem}")
    return number_checks.in_written_order(row)


# Keys that files written before the rename used, with the key that replaced each.
_RENAMED_KEYS = {"figures": "live_numbers"}
_RENAMED_ROW_KEYS = {"figure": "live"}


def _refuse_old_keys(card_data: dict[str, Any], path: Path, step: int) -> None:
    """Refuse a card written with the old keys, naming the new ones, rather than drop its rows."""
    rows = card_data.get("live_numbers") or card_data.get("figures") or []
    found = [(old, new) for old, new in _RENAMED_KEYS.items() if old in card_data]
    found += [(old, new) for old, new in _RENAMED_ROW_KEYS.items()
              if any(isinstance(row, dict) and old in row for row in rows)]  # fmt: skip
    if found:
        renamed = "; ".join(f"'{old}' is now '{new}'" for old, new in found)
        raise ContentError(f"{path}: card step {step}: {renamed}")


def _live_number_row(row: Any, path: Path, step: int) -> dict[str, Any]:
    """A "Computed live" row from a file: tolerance and note only when given, as export writes them."""
    if not isinstance(row, dict):
        raise ContentError(
            f"{path}: card step {step}: each live number is a mapping with label, live and stated"
        )
    values: dict[str, Any] = {name: str(row.get(name, "")) for name in LIVE_NUMBER_FIELDS}
    if row.get("tolerance") is not None:
        tolerance = row["tolerance"]
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
            raise ContentError(
                f"{path}: card step {step}: live number {values['live']}: tolerance is a fraction from 0 to 1 "
                f"(0.01 is 1%), not {tolerance!r}"
            )
        values["tolerance"] = float(tolerance)
    if note := _text(row, "note"):
        values["note"] = note
    return values


def _minutes(value: Any, path: Path) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ContentError(f"{path}: 'minutes' must be a whole number of minutes, not {value!r}")
    return value


def _published(data: dict[str, Any], path: Path) -> bool:
    # Absent means published: a draft says so with `published: false`.
    value = data.get("published", True)
    if not isinstance(value, bool):
        raise ContentError(f"{path}: 'published' must be true or false, not {value!r}")
    return value


def _scenario_slug(slug: Any, scenarios: dict[str, Any], path: Path, step: int) -> str | None:
    if not slug:
        return None
    if slug not in scenarios:
        raise ContentError(f"{path}: card step {step} names unknown scenario '{slug}'")
    return str(slug)


def _check_live_numbers(values: dict[str, Any], scenarios: dict[str, Any], path: Path, step: int) -> None:
    """Refuse a card whose text or panel cites a live number its scenario cannot give."""
    slug = values["scenario"]
    params = scenarios[slug].sweep_params() if slug else None
    texts = [text for name in Card.TEXT_FIELDS for text in as_written_and_shown(values[name])]
    names = [str(row["live"]) for row in values["live_numbers"]]
    measured = [name for name in names if is_measured_number(name)]
    names = [name for name in names if name not in measured]
    texts += ["{{" + name + "}}" for name in measured]
    texts += [live_numbers.placeholder(name) for name in names if not citations.is_calc_number(name)]
    problems = live_numbers.problems(texts, params)
    cited = list(dict.fromkeys(found for text in texts for found in citations.in_text(text)))
    for name in filter(citations.is_calc_number, names):
        if (found := citations.parse_calc_number(name)) is None:
            problems.append(f"{name}: write a calculator's number as calc.SET_SLUG.OUTPUT_KEY")
        else:
            cited.append(found)
    problems += citations.problems(cited, simulator().calculators_by_slug(citations.slugs(cited)))
    problems += facts.problems(texts)
    problems += [
        problem for name in Card.TEXT_FIELDS for problem in live_number_markup_problems(values[name])
    ]
    if problems:
        raise ContentError(f"{path}: card step {step}: {'; '.join(problems)}")


def _import_practice_file(course: Course, path: Path, merger: _Merger) -> None:
    data = _load(path)
    lesson_slug = str(_require(data, "lesson", path))
    lesson = Lesson.objects.filter(course=course, slug=lesson_slug).first()
    if lesson is None:
        raise ContentError(f"{path}: no lesson '{lesson_slug}' in course {course.slug}")
    for order, entry in enumerate(_require(data, "templates", path) or [], start=1):
        _import_template(lesson, order, entry, path, merger)


def _import_template(lesson: Lesson, order: int, entry: Any, path: Path, merger: _Merger) -> None:
    slug = str(_require(entry, "slug", path))
    values: dict[str, Any] = {"order": order, "lesson": lesson.slug}
    for name in PRACTICE_FIELDS:
        value = entry.get(name, PRACTICE_DEFAULTS.get(name))
        if value is None:
            raise ContentError(f"{path}: template {slug}: missing '{name}'")
        values[name] = _text(entry, name) if name in PRACTICE_TEXT_FIELDS else value
    values["published"] = _published(entry, path)
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
        raise ContentError(f"{path}: template {slug}: {reasons}")
    _write_fields(template, to_write, created)
    _import_class_mistakes(template, entry.get(CLASS_MISTAKES_KEY) or [], path, merger)


def _import_class_mistakes(template: PracticeTemplate, entries: Any, path: Path, merger: _Merger) -> None:
    """The mistakes instructors named from the class's answers, as the file holds them, each
    merged as a template's fields are and written through the admin's checks. One in the
    database that the file lacks is kept, as every row is."""
    where = f"{path}: template {template.slug}"
    if not isinstance(entries, list):
        raise ContentError(
            f"{where}: '{CLASS_MISTAKES_KEY}' is a list of mistakes, each a slug, says and formula"
        )
    in_database = {row["slug"]: row for row in class_mistakes.entries_of(template)}
    for entry in entries:
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(key), str) and entry[key] for key in class_mistakes.ENTRY_KEYS
        ):
            raise ContentError(
                f"{where}: each of '{CLASS_MISTAKES_KEY}' has a slug, says and formula, all text; not {entry!r}"
            )
        slug = entry["slug"]
        values = {"says": _text(entry, "says"), "formula": entry["formula"]}
        before = in_database.get(slug)
        label = f"class mistake {template.slug}/{slug}"
        to_write = merger.merge(label, before is None, values, before or {})
        if before is None or to_write:
            problems = class_mistakes.write_entry(template, {**(before or {}), **to_write, "slug": slug})
            if problems:
                raise ContentError(f"{where}: class mistake {slug}: {'; '.join(problems)}")


def _model_values(template: PracticeTemplate) -> dict[str, Any]:
    return {
        "slug": template.slug,
        "lesson": template.lesson,
        **{n: getattr(template, n) for n in PRACTICE_FIELDS},
    }

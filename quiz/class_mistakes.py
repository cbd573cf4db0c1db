"""Mistakes the class makes that nobody named: found in the class's wrong first tries, named by an
instructor in the admin (ClassMistake), offered from then on like a template's own.

``unnamed_groupings`` is the one reading both /instructor/ and ``manage.py drill --unnamed`` show:
per template, the latest wrong first tries of the learners the class's statistics count, grouped
by felab_sim.engine.problems.unnamed_mistakes (one query for every template; the engine bounds the draws).

Grouping is the costly part (every try is drawn again and compared with its candidates: about a
second of CPU for 150 students and 35 templates), so each template's grouping is kept in Django's
cache under a digest of everything it is computed from: the tries as read, the template's spec
fields, the mistakes named for it, the limit and the engine's source. A new try, an edit, a
named mistake or a new engine changes the digest, so no kept grouping is ever read for other
inputs; a load with nothing new reads the tries (one query) and regroups nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.core.cache import cache
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import models
from django.db.models.functions import RowNumber

import felab_sim.engine
from felab_sim.engine.problems import unnamed_mistakes
from felab_sim.engine.problems.drill_specs import DrillError
from felab_sim.engine.problems.formulas import FormulaError, parse_formula
from felab_sim.engine.problems.mistakes import NEAR_SHARE
from felab_sim.engine.problems.unnamed_mistakes import Grouping, WrongTry, group_unnamed
from lessons.class_mistakes import ENTRY_KEYS
from lessons.models import PracticeTemplate

from .models import ClassMistake, PracticeAttempt, Verdict


def named_by_template(template_ids: Iterable[int] | None = None) -> dict[int, list[ClassMistake]]:
    """The class-named mistakes by template id, oldest first, in one query."""
    rows = ClassMistake.objects.order_by("created_at", "id")
    if template_ids is not None:
        rows = rows.filter(template_id__in=list(template_ids))
    found: dict[int, list[ClassMistake]] = {}
    for row in rows:
        found.setdefault(row.template_id, []).append(row)
    return found


def mistakes_of(template: PracticeTemplate, rows: Iterable[ClassMistake] | None = None) -> list:
    """The template's class-named mistakes, as the engine reads them, oldest first (``rows``:
    read already)."""
    if rows is None:
        rows = ClassMistake.objects.filter(template_id=template.pk).order_by("created_at", "id")
    found = []
    for row in rows:
        try:
            found.append(row.as_mistake())
        except FormulaError:
            continue  # refused on save; a row written around the admin is left out, not fatal
    return found


def entries_of(template: PracticeTemplate) -> list[dict[str, str]]:
    """The template's class mistakes as its content file holds them, oldest first
    (lessons.class_mistakes: ``export_lessons`` writes them beside the template's own)."""
    rows = ClassMistake.objects.filter(template_id=template.pk).order_by("created_at", "id")
    return [{key: getattr(row, key) for key in ENTRY_KEYS} for row in rows]


def write_entry(template: PracticeTemplate, entry: dict[str, str]) -> list[str]:
    """Create or update the template's class mistake named ``entry["slug"]`` (``import_lessons``),
    after the checks the admin's form makes: the fields' own (a slug, lengths), then
    ``ClassMistake.clean`` (the strict formula, a sentence naming only the draw's numbers, told
    apart on some draw). Nothing is written where they refuse it; the reasons are returned, one
    "field: message" each."""
    row = ClassMistake.objects.filter(template_id=template.pk, slug=entry["slug"]).first()
    row = row or ClassMistake(template=template, slug=entry["slug"])
    row.template = template  # as this import wrote it, not as the database held it before
    row.says, row.formula = entry["says"], entry["formula"]
    try:
        row.full_clean()
    except ValidationError as error:
        return [
            f"{name}: {message}" if name != NON_FIELD_ERRORS else message
            for name, messages in error.message_dict.items()
            for message in messages
        ]
    row.save()
    return []


def _wrong_first_tries(templates: Sequence[PracticeTemplate], limit: int) -> dict[int, list[WrongTry]]:
    """Each template's latest ``limit + 1`` wrong first tries (one more, so the engine sees it
    was capped), with the right ones further off than half the tolerance, in one query."""
    rows = (
        PracticeAttempt.objects.in_class_statistics()
        .filter(template__in=[t.pk for t in templates], tries__gt=0, first_ratio__isnull=False)
        .filter(
            ~models.Q(first_verdict=Verdict.RIGHT)
            | ~models.Q(first_mistake="")
            # Right, but further off than the printed answer may be: perhaps a mistake inside the
            # tolerance (felab_sim.engine.problems.unnamed_mistakes).
            | models.Q(first_ratio__gt=1 + models.F("template__tolerance") * NEAR_SHARE)
            | models.Q(first_ratio__lt=1 - models.F("template__tolerance") * NEAR_SHARE)
        )
        .annotate(
            latest=models.Window(
                RowNumber(),
                partition_by=[models.F("template_id")],
                order_by=[models.F("answered_at").desc(), models.F("id").desc()],
            )
        )
        .filter(latest__lte=limit + 1)
        .order_by("template_id", "latest")
        .values_list("template_id", "seed", "first_ratio", "expected", "first_mistake", "first_verdict")
    )
    found: dict[int, list[WrongTry]] = {}
    for template_id, seed, ratio, expected, named, verdict in rows:
        right = verdict == Verdict.RIGHT and not named
        found.setdefault(template_id, []).append(WrongTry(seed, ratio, expected, named, graded_right=right))
    return found


# A grouping is kept a week: one whose inputs have changed is never asked for again, and goes then.
KEPT_FOR_S = 7 * 24 * 3600
CACHE_KEY_PREFIX = "felab:unnamed-grouping:"
# Every field of a try, as a tuple (dataclasses.astuple copies deeply: ten times slower).
_try_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(WrongTry)))


@functools.cache
def _engine_digest() -> str:
    """The engine's source, digested once per process: a grouping kept by an older engine (the
    cache outlives a deploy) is never read by a newer one."""
    digest = hashlib.sha256()
    root = Path(felab_sim.engine.__file__).parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _grouping_key(
    template: PracticeTemplate, tries: list[WrongTry], named: Sequence[ClassMistake], limit: int
) -> str:
    """A digest of everything ``group_unnamed`` reads for this template."""
    inputs = {
        "engine": _engine_digest(),
        "template": [template.pk, template.slug],
        "spec": {name: getattr(template, name) for name in PracticeTemplate.SPEC_FIELDS},
        "named": [[row.pk, row.slug, row.says, row.formula] for row in named],
        "limit": limit,
        "tries": [_try_fields(wrong) for wrong in tries],
    }
    text = json.dumps(inputs, sort_keys=True, default=str, allow_nan=True)
    return CACHE_KEY_PREFIX + hashlib.sha256(text.encode()).hexdigest()


def _grouped(
    template: PracticeTemplate, tries: list[WrongTry], named: Sequence[ClassMistake], limit: int
) -> Grouping | None:
    """The template's grouping computed afresh; None where its spec cannot be read."""
    try:
        spec = template.spec(class_mistakes=False)
    except DrillError:
        return None
    if extra := mistakes_of(template, named):
        spec = dataclasses.replace(spec, mistakes=(*spec.mistakes, *extra))
    return group_unnamed(spec, tries, limit=limit)


def unnamed_groupings(
    templates: Iterable[PracticeTemplate],
    limit: int | None = None,
    named: dict[int, list[ClassMistake]] | None = None,
) -> list[Grouping]:
    """Per template that has wrong first tries (in the order given): the latest ``limit`` (by
    default unnamed_mistakes.PAGE_TRIES, as /instructor/ reads) grouped, against the template's
    mistakes and those named from the class's answers (``named``: read already by
    ``named_by_template``), in two queries and one cache read; only templates whose inputs
    changed since they were last grouped are grouped again."""
    if limit is None:
        limit = unnamed_mistakes.PAGE_TRIES
    templates = list(templates)
    tries = _wrong_first_tries(templates, limit)
    if named is None:
        named = named_by_template(tries)
    keys = {
        template.pk: _grouping_key(template, tries[template.pk], named.get(template.pk, ()), limit)
        for template in templates
        if tries.get(template.pk)
    }
    kept = cache.get_many(list(keys.values())) if keys else {}
    groupings, fresh = [], {}
    for template in templates:
        key = keys.get(template.pk)
        if key is None:
            continue
        grouping = kept.get(key)
        if grouping is None:
            grouping = _grouped(template, tries[template.pk], named.get(template.pk, ()), limit)
            if grouping is None:
                continue
            fresh[key] = grouping
        groupings.append(grouping)
    if fresh:
        cache.set_many(fresh, timeout=KEPT_FOR_S)
    return groupings


@dataclass(frozen=True)
class Surfaced:
    template: str
    factor: float
    largest: str  # the largest group's label, or "—"
    share: float  # its share of the wrong first tries read
    wrong: int  # wrong first tries read
    surfaced: bool


def _factor_of(formula: str) -> float | None:
    """The factor a group's formula applies to the answer ("answer * 2", "answer * 2 / 3"); None
    for one that reads more than the answer."""
    try:
        return parse_formula(formula, {"answer"}).value({"answer": 1.0})
    except FormulaError:
        return None


def planted_surfaced(plants: Iterable[tuple[str, float]]) -> list[Surfaced]:
    """For a simulated class with planted unnamed mistakes (template slug, the factor applied to
    the right answer): is each its template's largest unnamed group, reading the class's latest
    wrong first tries a template as /instructor/ does (unnamed_mistakes.PAGE_TRIES)?
    (bench/learning_mistakes.py)"""
    plants = list(plants)
    templates = list(PracticeTemplate.objects.filter(slug__in=[slug for slug, _ in plants]))
    groupings = {g.template: g for g in unnamed_groupings(templates)}
    found = []
    for slug, factor in plants:
        grouping = groupings.get(slug)
        largest = grouping.largest if grouping is not None else None
        factor_found = _factor_of(largest.formula) if largest is not None else None
        hit = factor_found is not None and math.isclose(factor_found, factor, rel_tol=1e-9)
        found.append(
            Surfaced(
                slug,
                factor,
                largest.label if largest is not None else "—",
                largest.share if largest is not None else 0.0,
                grouping.wrong if grouping is not None else 0,
                hit,
            )
        )
    return found

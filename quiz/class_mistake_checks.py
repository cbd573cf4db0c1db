"""Whether a mistake an instructor names from the class's answers can be offered: its slug, its
sentence and its formula read, and some draw tells it apart (felab_sim.engine.problems.mistakes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.core.exceptions import ValidationError

from felab_sim.engine.problems.drill_specs import DrillError
from felab_sim.engine.problems.drills import draw_problem
from felab_sim.engine.problems.formulas import FormulaError, parse_formula
from felab_sim.engine.problems.mistakes import SLUG, formula_names, mistake_problems

# A formula is saved only if it is offered on at least one of this many draws (seeds 1 to N).
CHECKED_DRAWS = 32


def refuse_unless_offered(row: Any) -> None:  # a quiz.models.ClassMistake
    """ValidationError, field by field, unless the row reads and is offered on some draw."""
    if row.template_id is None:
        raise ValidationError({"template": "Choose the template this mistake is made on."})
    template = row.template
    errors: dict[str, list[str]] = {}
    try:
        spec = template.spec(class_mistakes=False)
    except DrillError as error:
        raise ValidationError({"template": f"This template cannot be read: {error.message}"}) from None
    if not SLUG.match(row.slug or ""):
        errors.setdefault("slug", []).append(
            "A slug is lower-case words joined by hyphens, e.g. doubled-twice."
        )
    elif row.slug in {m.slug for m in spec.mistakes}:
        errors.setdefault("slug", []).append(
            f"This template already has a mistake named {row.slug}; choose another slug."
        )
    if not (row.says or "").strip():
        errors.setdefault("says", []).append(
            "Write the sentence students read: what the answer is, what to check."
        )
    # Those named before it come first on a draw, as the template's own do.
    others = (
        type(row).objects.filter(template_id=row.template_id).exclude(pk=row.pk).order_by("created_at", "id")
    )
    for other in others:
        try:
            spec = dataclasses.replace(spec, mistakes=(*spec.mistakes, other.as_mistake()))
        except FormulaError:
            continue
    try:
        formula = parse_formula(row.formula, formula_names(spec))
    except FormulaError as error:
        errors.setdefault("formula", []).append(error.message[:1].upper() + error.message[1:] + ".")
        formula = None
    if errors or formula is None:
        raise ValidationError(errors)
    mistake = row.as_mistake()
    with_it = dataclasses.replace(spec, mistakes=(*spec.mistakes, mistake))
    for problem in mistake_problems(with_it):
        if problem.startswith(f"mistake {row.slug}:"):
            errors.setdefault("says", []).append(problem.removeprefix(f"mistake {row.slug}: ") + ".")
    if errors:
        raise ValidationError(errors)
    offered = 0
    for seed in range(1, CHECKED_DRAWS + 1):
        try:
            problem = draw_problem(with_it, seed)
        except DrillError:
            continue
        offered += any(m.slug == row.slug for m, _ in problem.offered_values)
    if not offered:
        raise ValidationError(
            {
                "formula": f"On none of {CHECKED_DRAWS} draws does this formula stand apart from the right answer "
                "and from the template's own mistakes, so no student would ever read it (answer * 1 is the "
                "right answer; answer * 1.02 is within its tolerance)."
            }
        )

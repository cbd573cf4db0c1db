"""A learner's concepts, weakest first, for /progress/: how their first tries went on the problems
that exercise each concept (felab_sim/engine/problems/concepts.py), with the problems that train it.

The measure, per concept: of the learner's problems (each counted once, PracticeAttempt.repeats_a_problem)
whose template's steps exercise it, the share whose first try was right without a hint. A first try
that made a named mistake counts against the mistake's concepts only, those of them the template's
steps exercise (the slip says which idea failed; the template's other concepts are left out of
that problem); any other miss (close, off, an unnamed wrong answer, a named one with none of the
template's concepts, a hint before the first try, Show me) counts against all of the template's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from felab_sim.engine.problems import concepts
from lessons.models import PracticeTemplate

from .learner_rows import Owner
from .models import PracticeAttempt, Verdict

# How many problems a concept links to (due ones first, then the least practised): enough to
# choose from on a phone without a list as long as the course.
TRAINING_LINKS = 3


@dataclass(frozen=True)
class ConceptRecord:
    slug: str
    name: str
    says: str
    right: int  # problems right at the first try without a hint
    seen: int  # problems that exercised it
    training: tuple[PracticeTemplate, ...]  # published templates that train it

    @property
    def share(self) -> float | None:
        return self.right / self.seen if self.seen else None

    @property
    def percent(self) -> int | None:
        return None if self.seen == 0 else round(100 * self.right / self.seen)


def tally(rows: list[tuple[str, str, str, int, bool]]) -> dict[str, list[int]]:
    """Per concept, [right, seen] from (template slug, first verdict, first mistake, hints
    before the first try, Show me before any answer) of each problem counted once."""
    counts: dict[str, list[int]] = {slug: [0, 0] for slug in concepts.CONCEPT_SLUGS}
    for template_slug, first_verdict, first_mistake, first_hints, shown_unanswered in rows:
        exercised = concepts.of_template(template_slug)
        right = first_verdict == Verdict.RIGHT and not first_hints and not shown_unanswered
        counted = exercised
        if first_mistake and not right:
            # Only the slip's concepts this template trains: one it never exercises would gain
            # failures from it and never a success.
            slipped = set(concepts.of_mistake(template_slug, first_mistake))
            counted = tuple(concept for concept in exercised if concept in slipped) or exercised
        for concept in counted:
            counts[concept][1] += 1
            counts[concept][0] += right
    return counts


def concepts_of(
    learner: Owner, templates: Mapping[int, PracticeTemplate], due: Collection[int] = ()
) -> list[ConceptRecord]:
    """The learner's concepts, weakest first (lowest share right, then the most seen), then those
    not practised yet; [] for a learner with no problem answered. One query."""
    if not learner.known:
        return []
    rows = []
    tried: dict[int, int] = {}
    for template_id, first_verdict, verdict, first_mistake, first_hints, tries in (
        PracticeAttempt.objects.for_learner(learner)
        .filter(repeats_a_problem=False)
        .values_list("template_id", "first_verdict", "verdict", "first_mistake", "first_hints", "tries")
        .order_by()
    ):
        template = templates.get(template_id)
        if template is None:
            continue
        tried[template_id] = tried.get(template_id, 0) + 1
        rows.append((template.slug, first_verdict or verdict, first_mistake, first_hints, tries == 0))
    if not rows:
        return []
    counts = tally(rows)
    published = [t for t in templates.values() if t.published and t.lesson.published]
    published.sort(key=lambda t: (t.lesson.order, t.lesson.number, t.order, t.slug))
    training = concepts.templates_training(t.slug for t in published)
    by_slug = {t.slug: t for t in published}
    records = []
    for concept in concepts.CONCEPTS:
        right, seen = counts[concept.slug]
        choices = sorted(
            (by_slug[slug] for slug in training[concept.slug]),
            key=lambda t: (t.pk not in due, tried.get(t.pk, 0)),
        )
        records.append(
            ConceptRecord(
                concept.slug, concept.name, concept.says, right, seen, tuple(choices[:TRAINING_LINKS])
            )
        )
    records.sort(key=lambda r: (r.seen == 0, r.share if r.seen else 0, -r.seen))
    return records

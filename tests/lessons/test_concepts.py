"""The concepts practice exercises, declared once (felab_sim/engine/problems/concepts.py): every bundled
template's steps and every named mistake have at least one, and every concept is used."""

from felab_sim.engine.problems import concepts
from tests.lessons.test_practice_bundled import SPECS


def test_every_template_tags_each_step_and_has_a_concept():
    assert set(concepts.TEMPLATE_STEPS) == set(SPECS), "a template added or removed: tag its steps"
    for slug, spec in SPECS.items():
        steps = [line for line in spec.solution.splitlines() if line.strip()]
        assert len(concepts.TEMPLATE_STEPS[slug]) == len(steps), f"{slug}: one tuple a solution step"
        assert concepts.of_template(slug), slug


def test_every_named_mistake_has_a_concept():
    untagged = [
        f"{slug}/{mistake.slug}"
        for slug, spec in SPECS.items()
        for mistake in spec.mistakes
        if not concepts.of_mistake(slug, mistake.slug)
    ]
    assert untagged == []


def test_every_named_mistake_gets_wrong_only_concepts_its_template_exercises():
    # /progress/ lists a template as training each of its steps' concepts; a mistake's concept
    # outside them would only ever count failures there, never a right first try.
    outside = {
        f"{slug}/{mistake.slug}": sorted(
            set(concepts.of_mistake(slug, mistake.slug)) - set(concepts.of_template(slug))
        )
        for slug, spec in SPECS.items()
        for mistake in spec.mistakes
    }
    assert {key: extra for key, extra in outside.items() if extra} == {}


def test_every_concept_is_used_and_every_tag_is_a_concept():
    used = {c for steps in concepts.TEMPLATE_STEPS.values() for step in steps for c in step}
    used_by_mistakes = {c for tags in concepts.MISTAKES.values() for c in tags}
    assert (used | used_by_mistakes) <= set(concepts.CONCEPT_SLUGS)
    assert set(concepts.CONCEPT_SLUGS) <= used, "a concept no template's steps exercise"
    assert len(set(concepts.CONCEPT_SLUGS)) == len(concepts.CONCEPTS)


def test_every_declared_mistake_is_one_a_template_names():
    named = {m.slug for spec in SPECS.values() for m in spec.mistakes}
    named |= {f"{slug}/{m.slug}" for slug, spec in SPECS.items() for m in spec.mistakes}
    assert set(concepts.MISTAKES) - named == set()


def test_a_mistake_declared_for_one_template_overrides_its_slug_elsewhere():
    assert concepts.of_mistake("l05-kv-per-conversation", "one-layer") == ("k-and-v",)
    assert concepts.of_mistake("l16-lora-share", "one-layer") == ("adapters",)
    assert concepts.of_mistake("l05-kv-per-conversation", "named-in-the-admin-later") == ()

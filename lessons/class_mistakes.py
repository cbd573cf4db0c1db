"""Mistakes named from the class's answers, and their grouping, asked of the app that keeps them.

Instructors name a mistake the class makes in the admin (quiz.ClassMistake), from the groups of
unexplained wrong first tries quiz finds in its attempts. Both live in quiz, above lessons: quiz
hands its functions in at start-up (provide(), from QuizConfig.ready), so a template's engine
reading offers those mistakes like its own, ``manage.py drill --unnamed`` prints quiz's
grouping, and the content files carry them with their template (``export_lessons`` writes them,
``import_lessons`` reads them back through the admin's checks), while lessons imports nothing of
quiz.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from felab_sim.engine.problems.mistakes import Mistake

_provided: dict[str, Callable[..., Any]] = {}
PROVIDED = ("mistakes_of", "unnamed_groupings", "entries_of", "write_entry")
# A class mistake's keys in a content file, in the order written.
ENTRY_KEYS = ("slug", "says", "formula")


def provide(**functions: Callable[..., Any]) -> None:
    """``mistakes_of(template) -> tuple[Mistake, ...]``, ``unnamed_groupings(templates, limit)
    -> list[Grouping]`` (felab_sim.engine.problems.unnamed_mistakes), ``entries_of(template) ->
    list[dict]`` and ``write_entry(template, entry) -> list[str]`` (below)."""
    if unknown := set(functions) - set(PROVIDED):
        raise TypeError(f"no class-mistake function is named {', '.join(sorted(unknown))}")
    _provided.update(functions)


def mistakes_of(template: Any) -> tuple[Mistake, ...]:
    """The mistakes instructors named for this template from the class's answers (none before
    quiz has provided them, or for a template not saved yet)."""
    function = _provided.get("mistakes_of")
    if function is None or template.pk is None:
        return ()
    return tuple(function(template))


def unnamed_groupings(templates: Sequence[Any], limit: int) -> list[Any]:
    function = _provided.get("unnamed_groupings")
    if function is None:
        raise LookupError("the class's answers are quiz's; it has not provided its grouping")
    return function(templates, limit)


def entries_of(template: Any) -> list[dict[str, str]]:
    """The template's class mistakes as its content file holds them ({slug, says, formula}, in
    ENTRY_KEYS' order), oldest first: none before quiz has provided them."""
    function = _provided.get("entries_of")
    if function is None or template.pk is None:
        return []
    return function(template)


def write_entry(template: Any, entry: dict[str, str]) -> list[str]:
    """Create or update the template's class mistake ``entry["slug"]`` with its sentence and
    formula, after the checks the admin makes; nothing is written where they refuse it, and the
    reasons are returned ("formula: …")."""
    function = _provided.get("write_entry")
    if function is None:
        raise LookupError("class mistakes are quiz's; it has not provided their writing")
    return function(template, entry)

"""Files of the lesson content that another app keeps: felab_sim's scenarios and parameter sets.

Cards cite a scenario by slug and parameter sets by {{calc.SLUG.OUTPUT}}; those rows belong to
the simulator, which also knows how to check and write them. So import_lessons and
export_lessons read and write those files through sections the simulator hands in: an app
whose AppConfig has a ``lesson_content_sections`` list (felab_sim fills its own in
FelabSimConfig.ready) contributes them, and lessons imports nothing of that app. A section
is any object with the attributes of :class:`ContentSection`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

from django.apps import apps


class ContentSection(Protocol):
    # Its file beside glossary.yaml (e.g. "scenarios.yaml"), and what the import reports
    # call one of its rows (e.g. "scenario"): the import's labels and baselines use it.
    file_name: str

    def import_file(self, file: SectionFile) -> dict[str, Any]:
        """Create or update the rows the file's entries describe; return them by slug."""

    def export_entries(self) -> list[dict[str, Any]]:
        """Every row as its file entry, in file order (no file is written for none)."""


@dataclass
class SectionFile:
    """What a section's import is given: its file's entries, and lessons' rules for reading
    them and for merging each row with an instructor's edits (lessons/content_import.py)."""

    path: Path
    entries: list[Any]
    # require(entry, key), text(entry, key), merge(label, row, created, values): see content_import.
    require: Callable[[Any, str], Any]
    text: Callable[[dict[str, Any], str], str]
    merge: Callable[[str, Any, bool, dict[str, Any]], None]
    content_error: type[Exception]

    def refuse(self, message: str) -> NoReturn:
        """Stop the import, naming this file: the whole import is rolled back."""
        raise self.content_error(f"{self.path}: {message}")


def installed_sections() -> list[ContentSection]:
    """Every installed app's sections, in INSTALLED_APPS order, each in its app's order."""
    return [
        section
        for config in apps.get_app_configs()
        for section in getattr(config, "lesson_content_sections", ())
    ]

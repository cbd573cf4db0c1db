"""The bundled lessons in a test's database, imported for real once per test process and then
copied in as the rows that import wrote.

`import_lessons` reads, renders and checks every lesson file (seconds per call, hundreds of
tests ask for it); the rows it writes into an empty database are the same every time, and
writing them again takes a fraction of that. The tests of the import itself call the command.
"""

from __future__ import annotations

import io

from django.apps import apps
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, models, transaction

from pagecache.content_cache import CONTENT

Rows = list[tuple[type[models.Model], list[dict[str, object]]]]

_imported: Rows | None = None


def _all_models() -> list[type[models.Model]]:
    return [model for model in apps.get_models(include_auto_created=True) if model._meta.managed]


def _counts() -> dict[type[models.Model], int]:
    return {model: model._base_manager.count() for model in _all_models()}


def _rows(model: type[models.Model]) -> list[dict[str, object]]:
    names = [field.attname for field in model._meta.concrete_fields]
    return list(model._base_manager.order_by("pk").values(*names))


def _import() -> Rows | None:
    """Runs the import; returns what it wrote when it wrote into empty tables only."""
    before = _counts()
    call_command("import_lessons", verbosity=0, stdout=io.StringIO())
    written = [model for model, count in _counts().items() if count != before[model]]
    if any(before[model] for model in written):
        return None
    return [(model, _rows(model)) for model in written]


def load_bundled_lessons() -> None:
    global _imported
    if _imported is None:
        _imported = _import()
        return
    if any(model._base_manager.exists() for model, _ in _imported):
        # The test made content of its own first: only the import knows how to merge.
        call_command("import_lessons", verbosity=0, stdout=io.StringIO())
        return
    with transaction.atomic():  # foreign keys are checked at commit, whatever the order
        for model, rows in _imported:
            model._base_manager.bulk_create([model(**row) for row in rows])
        with connection.cursor() as cursor:
            for statement in connection.ops.sequence_reset_sql(no_style(), [m for m, _ in _imported]):
                cursor.execute(statement)
    CONTENT.changed()

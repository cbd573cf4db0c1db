"""Every live number a card's content names fits its column: SQLite never checks a varchar's
length, PostgreSQL refuses the import (a 63-character calc name failed `make release` there)."""

from pathlib import Path

import pytest
import yaml
from django.apps import apps
from django.core.management import call_command
from django.db import models

from lessons.models import CardNumber

CONTENT_APPS = {"lessons", "felab_sim"}

CONTENT = Path(__file__).resolve().parent.parent.parent / "lessons" / "content"


def live_number_names(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["live"]] if isinstance(node.get("live"), str) else []
        return found + [name for value in node.values() for name in live_number_names(value)]
    if isinstance(node, list):
        return [name for item in node for name in live_number_names(item)]
    return []


def test_every_card_live_number_name_fits_its_column():
    longest = CardNumber._meta.get_field("live").max_length
    names = [
        name
        for path in CONTENT.rglob("*.yaml")
        for name in live_number_names(yaml.safe_load(path.read_text()))
    ]
    assert names, "no live number names found in the content"
    assert [name for name in names if len(name) > longest] == []


@pytest.mark.django_db
def test_every_bundled_text_fits_its_column_as_postgresql_would_check():
    """Lesson 14's source notes ran past a 300-character column: SQLite stored them whole, and
    `import_lessons` failed on PostgreSQL. Import the bundled content, then measure every row of
    every capped column of the apps it fills."""
    call_command("import_lessons", verbosity=0)
    too_long = []
    for model in apps.get_models():
        if model._meta.app_label not in CONTENT_APPS:
            continue
        for field in model._meta.concrete_fields:
            if not isinstance(field, models.CharField) or field.max_length is None:
                continue
            for pk, value in model.objects.values_list("pk", field.attname):
                if value is not None and len(value) > field.max_length:
                    too_long.append(f"{model.__name__} {pk}.{field.name}: {len(value)} > {field.max_length}")
    assert too_long == []

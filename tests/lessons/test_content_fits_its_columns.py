"""Every live number a card's content names fits its column: SQLite never checks a varchar's
length, PostgreSQL refuses the import (a 63-character calc name failed `make release` there)."""

from pathlib import Path

import yaml

from lessons.models import CardNumber

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

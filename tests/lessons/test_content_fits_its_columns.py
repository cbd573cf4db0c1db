"""Every figure a card's content names fits its column: SQLite never checks a varchar's length,
PostgreSQL refuses the import (a 63-character calc figure name failed `make release` there)."""

from pathlib import Path

import yaml

from lessons.models import CardFigure

CONTENT = Path(__file__).resolve().parent.parent.parent / "lessons" / "content"


def figure_names(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["figure"]] if isinstance(node.get("figure"), str) else []
        return found + [name for value in node.values() for name in figure_names(value)]
    if isinstance(node, list):
        return [name for item in node for name in figure_names(item)]
    return []


def test_every_card_figure_name_fits_its_column():
    longest = CardFigure._meta.get_field("figure").max_length
    names = [
        name for path in CONTENT.rglob("*.yaml") for name in figure_names(yaml.safe_load(path.read_text()))
    ]
    assert names, "no figure names found in the content"
    assert [name for name in names if len(name) > longest] == []

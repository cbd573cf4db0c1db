"""0014 renames CardFigure to CardNumber and its field figure to live: a card's rows, the
Instructors group's permissions on them and the last import's baselines come through."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.conftest import MIGRATED_INSTRUCTOR_PERMISSIONS

BEFORE = [("lessons", "0013_help_text_names_the_calculators_reference")]
RENAMED = [("lessons", "0014_cardfigure_is_cardnumber")]
ACTIONS = ("add", "change", "delete", "view")


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def _card(apps):
    Course = apps.get_model("lessons", "Course")
    course = Course.objects.create(slug="c", title="C")
    lesson = apps.get_model("lessons", "Lesson").objects.create(course=course, number=1, slug="x", title="X")
    return apps.get_model("lessons", "Card").objects.create(lesson=lesson, step=1, title="T", question="Q")


def _instructors_codenames(apps) -> set[str]:
    group = apps.get_model("auth", "Group").objects.get(name="Instructors")
    return set(group.permissions.filter(content_type__app_label="lessons").values_list("codename", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_cards_live_numbers_permissions_and_baseline_keep_their_data_through_the_rename(instructors_group):
    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    card = _card(old)
    row = old.get_model("lessons", "CardFigure").objects.create(
        card=card, order=1, label="Total, 8 people (tok/s)", figure="c8.agg_tok_s", stated="275.1",
        tolerance=0.005, note="measured, not modelled",
    )  # fmt: skip
    old_row = {
        "label": "Total, 8 people (tok/s)",
        "figure": "c8.agg_tok_s",
        "stated": "275.1",
        "tolerance": 0.005,
    }
    old.get_model("lessons", "ImportBaseline").objects.create(
        key="card c/x/1", values={"title": "T", "figures": [old_row], "terms": []}
    )
    assert {f"{action}_cardfigure" for action in ACTIONS} <= _instructors_codenames(old)

    try:
        new = migrate(RENAMED).loader.project_state(RENAMED).apps
        number = new.get_model("lessons", "CardNumber").objects.get()
        assert (number.pk, number.card_id, number.order, number.label, number.live, number.stated) == (
            row.pk, card.pk, 1, "Total, 8 people (tok/s)", "c8.agg_tok_s", "275.1",
        )  # fmt: skip
        assert (number.tolerance, number.note) == (0.005, "measured, not modelled")
        assert list(new.get_model("lessons", "Card").objects.get(pk=card.pk).numbers.all()) == [number]
        codenames = _instructors_codenames(new)
        assert {f"{action}_cardnumber" for action in ACTIONS} <= codenames
        assert not {name for name in codenames if "cardfigure" in name}
        baseline = new.get_model("lessons", "ImportBaseline").objects.get(key="card c/x/1")
        new_row = {
            "label": "Total, 8 people (tok/s)",
            "live": "c8.agg_tok_s",
            "stated": "275.1",
            "tolerance": 0.005,
        }
        assert baseline.values == {"title": "T", "live_numbers": [new_row], "terms": []}

        # And back: the migration undoes itself, the row and the names as they were.
        old = migrate(BEFORE).loader.project_state(BEFORE).apps
        assert old.get_model("lessons", "CardFigure").objects.get().figure == "c8.agg_tok_s"
        assert {f"{action}_cardfigure" for action in ACTIONS} <= _instructors_codenames(old)
        assert old.get_model("lessons", "ImportBaseline").objects.get().values["figures"] == [old_row]
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_a_fresh_database_gives_instructors_the_live_numbers_under_their_new_name(db):
    granted = {codename for app_label, codename in MIGRATED_INSTRUCTOR_PERMISSIONS if app_label == "lessons"}
    assert {f"{action}_cardnumber" for action in ACTIONS} <= granted
    assert not {codename for codename in granted if "cardfigure" in codename}

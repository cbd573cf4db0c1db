"""CardFigure is CardNumber (a number a card states, shown beside its live value) and its field
`figure` is `live` (the live number's name); the rows, the Instructors group's permissions on them
and the last import's baselines come through under the new names. The help texts name
felab_sim/engine/live_numbers.py."""

import django.db.models.deletion
from django.db import migrations, models

# Frozen here, as they were when this migration was written: a migration must not depend on
# today's code.
ACTIONS = ("add", "change", "delete", "view")
BASELINE_LIST = {"figures": "live_numbers"}
BASELINE_ROW = {"figure": "live"}


def _rename_permissions(apps, old, new, old_words, new_words):
    """Each action's permission keeps its id, so the groups and users holding it keep it too."""
    Permission = apps.get_model("auth", "Permission")
    for action in ACTIONS:
        Permission.objects.filter(content_type__app_label="lessons", codename=f"{action}_{old}").update(
            codename=f"{action}_{new}", name=f"Can {action} {new_words}"
        )


def _rename_baselines(apps, list_keys, row_keys):
    """The last import's values of each card under the keys import_lessons now compares."""
    ImportBaseline = apps.get_model("lessons", "ImportBaseline")
    for baseline in ImportBaseline.objects.filter(key__startswith="card "):
        values = dict(baseline.values)
        if not any(old in values for old in list_keys):
            continue
        for old, new in list_keys.items():
            if old in values:
                rows = values.pop(old)
                values[new] = [
                    {row_keys.get(key, key): value for key, value in row.items()}
                    if isinstance(row, dict)
                    else row
                    for row in rows
                ]
        baseline.values = values
        baseline.save(update_fields=["values"])


def forwards(apps, schema_editor):
    _rename_permissions(apps, "cardfigure", "cardnumber", "live figure", "live number")
    _rename_baselines(apps, BASELINE_LIST, BASELINE_ROW)


def backwards(apps, schema_editor):
    _rename_permissions(apps, "cardnumber", "cardfigure", "live number", "live figure")
    _rename_baselines(
        apps,
        {new: old for old, new in BASELINE_LIST.items()},
        {new: old for old, new in BASELINE_ROW.items()},
    )


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("felab_sim", "0012_run_task_id"),
        ("lessons", "0013_help_text_names_the_calculators_reference"),
    ]

    operations = [
        migrations.RenameModel("CardFigure", "CardNumber"),
        migrations.RenameField("cardnumber", "figure", "live"),
        migrations.AlterModelOptions(
            name="cardnumber",
            options={"ordering": ["card", "order"], "verbose_name": "live number"},
        ),
        migrations.AlterField(
            model_name="card",
            name="kit_answer",
            field=models.TextField(
                blank=True,
                help_text="Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md).",
                verbose_name="The kit's answer",
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="kit_question",
            field=models.TextField(
                blank=True,
                help_text="Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md).",
                verbose_name="The kit's question",
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="more_detail",
            field=models.TextField(
                blank=True,
                help_text="Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md).",
                verbose_name="More detail",
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="picture_it",
            field=models.TextField(
                blank=True,
                help_text="An analogy, and where it stops working. Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md).",
                verbose_name="Picture it",
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="plain_words",
            field=models.TextField(
                help_text="Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md).",
                verbose_name="In plain words",
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="question",
            field=models.TextField(
                help_text="Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md)."
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="real_numbers",
            field=models.TextField(
                blank=True,
                help_text="Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, **bold**, *italic*, `code`, [link text](https://example.org). Raw HTML tags such as scripts and frames are removed when the page is shown. A live number goes in the text, never in a link target: {{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/live_numbers.py), {{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md).",
                verbose_name="With real numbers",
            ),
        ),
        migrations.AlterField(
            model_name="card",
            name="scenario",
            field=models.ForeignKey(
                blank=True,
                help_text="The simulator scenario behind this card's live numbers and chart.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="cards",
                to="felab_sim.scenario",
            ),
        ),
        migrations.AlterField(
            model_name="cardnumber",
            name="card",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="numbers", to="lessons.card"
            ),
        ),
        migrations.AlterField(
            model_name="cardnumber",
            name="live",
            field=models.CharField(
                help_text="A live number's name without 'sim.', e.g. c8.agg_tok_s (see felab_sim/engine/live_numbers.py).",
                max_length=120,
                verbose_name="live number",
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]

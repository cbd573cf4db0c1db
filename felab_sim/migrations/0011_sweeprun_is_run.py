"""SweepRun holds prefix-cache runs too: it is Run (with its Kind), its levels RunLevel. The
tables are renamed, not copied, so every run and its parts stay as they are."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("felab_sim", "0010_sweep_runs_go_with_their_starter"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="sweeprun", name="one_sweep_running_at_a_time"),
        migrations.RemoveConstraint(model_name="sweeprun", name="one_active_sweep_per_user"),
        migrations.RenameModel(old_name="SweepRun", new_name="Run"),
        migrations.RenameModel(old_name="SweepRunLevel", new_name="RunLevel"),
        migrations.AlterField(
            model_name="run",
            name="started_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="runs",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="run",
            constraint=models.UniqueConstraint(
                condition=models.Q(("state", "running")),
                fields=("state",),
                name="one_run_measuring_at_a_time",
            ),
        ),
        migrations.AddConstraint(
            model_name="run",
            constraint=models.UniqueConstraint(
                condition=models.Q(("state__in", ["queued", "running"])),
                fields=("started_by",),
                name="one_active_run_per_user",
            ),
        ),
    ]

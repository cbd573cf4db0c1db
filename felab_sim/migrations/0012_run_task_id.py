"""A run names its django-tasks task (Run.task_id), so a waiting run whose task is gone can be
given a new one; runs recorded before have none, and are given one at the first look."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("felab_sim", "0011_sweeprun_is_run"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="task_id",
            field=models.CharField(
                blank=True,
                help_text="Its task in django-tasks, the one that measures it when its turn comes.",
                max_length=64,
            ),
        ),
        migrations.AlterField(
            model_name="run",
            name="started_at",
            field=models.DateTimeField(
                default=django.utils.timezone.now, help_text="When it took its turn on the practice server."
            ),
        ),
    ]

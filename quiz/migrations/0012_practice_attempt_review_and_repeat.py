from django.db import migrations, models


def mark_repeated_problems(apps, schema_editor):
    """An attempt whose learner had already answered the same template with the same answer
    repeats a problem: mastery counts that problem once."""
    attempts = apps.get_model("quiz", "PracticeAttempt")
    seen = set()
    repeats = []
    rows = attempts.objects.order_by("answered_at", "id").values_list(
        "id", "user_id", "anonymous_id", "template_id", "expected"
    )
    for pk, user_id, anonymous_id, template_id, expected in rows.iterator():
        problem = (user_id, anonymous_id, template_id, expected)
        if problem in seen:
            repeats.append(pk)
        seen.add(problem)
    for start in range(0, len(repeats), 500):
        attempts.objects.filter(pk__in=repeats[start : start + 500]).update(repeats_a_problem=True)


class Migration(migrations.Migration):
    dependencies = [
        ("quiz", "0011_close_within_three_tolerances"),
    ]

    operations = [
        migrations.AddField(
            model_name="practiceattempt",
            name="is_review",
            field=models.BooleanField(
                default=True,
                help_text="The template was new or due at the first try, so FSRS counts its rating.",
            ),
        ),
        migrations.AddField(
            model_name="practiceattempt",
            name="repeats_a_problem",
            field=models.BooleanField(
                default=False,
                help_text="An earlier attempt of this learner's had the same template and answer.",
            ),
        ),
        migrations.RunPython(mark_repeated_problems, migrations.RunPython.noop),
    ]

"""Anonymous learners' rows are keyed by an id of their own, no longer by the session key.

Schema only: the column is renamed (its values are replaced in 0007) and the
constraints that name it are made again.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("quiz", "0005_instructors_view_quiz_records")]

    operations = [
        migrations.RemoveConstraint(model_name="showing", name="showing_has_one_learner"),
        migrations.RemoveConstraint(model_name="review", name="review_has_a_learner"),
        migrations.RemoveConstraint(model_name="cardstate", name="one_schedule_per_session"),
        migrations.RemoveConstraint(model_name="cardstate", name="schedule_has_one_learner"),
        migrations.RenameField(model_name="showing", old_name="session_key", new_name="anonymous_id"),
        migrations.RenameField(model_name="review", old_name="session_key", new_name="anonymous_id"),
        migrations.RenameField(model_name="cardstate", old_name="session_key", new_name="anonymous_id"),
        migrations.AddConstraint(
            model_name="showing",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("anonymous_id", ""), ("user__isnull", False)),
                    models.Q(("user__isnull", True), models.Q(("anonymous_id", ""), _negated=True)),
                    _connector="OR",
                ),
                name="showing_has_one_learner",
            ),
        ),
        migrations.AddConstraint(
            model_name="review",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("user__isnull", False), models.Q(("anonymous_id", ""), _negated=True), _connector="OR"
                ),
                name="review_has_a_learner",
            ),
        ),
        migrations.AddConstraint(
            model_name="cardstate",
            constraint=models.UniqueConstraint(
                condition=models.Q(("user__isnull", True)),
                fields=("card", "anonymous_id"),
                name="one_schedule_per_anonymous_learner",
            ),
        ),
        migrations.AddConstraint(
            model_name="cardstate",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("anonymous_id", ""), ("user__isnull", False)),
                    models.Q(("user__isnull", True), models.Q(("anonymous_id", ""), _negated=True)),
                    _connector="OR",
                ),
                name="schedule_has_one_learner",
            ),
        ),
    ]

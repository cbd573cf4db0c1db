from django.db import migrations, models


class Migration(migrations.Migration):
    """SharedVersion moves here from serving, its table as it was (serving's 0002 created it)."""

    initial = True

    dependencies = [
        ("serving", "0002_shared_versions"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SharedVersion",
                    fields=[
                        ("name", models.CharField(max_length=40, primary_key=True, serialize=False)),
                        ("token", models.CharField(max_length=32)),
                    ],
                    options={"db_table": "serving_sharedversion"},
                ),
            ],
        ),
    ]

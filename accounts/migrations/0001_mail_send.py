from django.db import migrations, models


class Migration(migrations.Migration):
    """MailSend moves here from serving, its table as it was (serving's 0003 created it)."""

    initial = True

    dependencies = [
        ("serving", "0003_mail_send"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="MailSend",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("ok", models.BooleanField()),
                        ("at", models.DateTimeField()),
                        ("error", models.TextField(blank=True)),
                    ],
                    options={"db_table": "serving_mailsend"},
                ),
            ],
        ),
    ]

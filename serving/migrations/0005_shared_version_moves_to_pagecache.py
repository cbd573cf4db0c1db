from django.db import migrations


class Migration(migrations.Migration):
    """SharedVersion now belongs to pagecache (its 0001), which keeps the table: only the state goes."""

    dependencies = [
        ("serving", "0004_mail_send_moves_to_accounts"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="SharedVersion")]),
    ]

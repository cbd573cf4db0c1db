from django.db import migrations


class Migration(migrations.Migration):
    """MailSend now belongs to accounts (its 0001), which keeps the table: only the state goes."""

    dependencies = [
        ("serving", "0003_mail_send"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="MailSend")]),
    ]

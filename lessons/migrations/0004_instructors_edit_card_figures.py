from django.db import migrations

from lessons.instructors import grant_content_permissions, revoke_content_permissions


def grant(apps, schema_editor):
    grant_content_permissions(apps, "lessons", ["cardfigure"])


def revoke(apps, schema_editor):
    revoke_content_permissions(apps, "lessons", ["cardfigure"])


class Migration(migrations.Migration):
    dependencies = [("lessons", "0003_card_scenario_and_figures")]

    operations = [migrations.RunPython(grant, revoke)]

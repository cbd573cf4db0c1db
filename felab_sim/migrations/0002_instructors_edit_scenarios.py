from django.db import migrations

from lessons.instructors import grant_content_permissions, revoke_content_permissions


def grant(apps, schema_editor):
    grant_content_permissions(apps, "felab_sim", ["scenario"])


def revoke(apps, schema_editor):
    revoke_content_permissions(apps, "felab_sim", ["scenario"])


class Migration(migrations.Migration):
    dependencies = [
        ("felab_sim", "0001_initial"),
        ("lessons", "0002_instructors_group"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

from django.db import migrations

from lessons.instructors import grant_content_permissions, revoke_content_permissions


def grant(apps, schema_editor):
    grant_content_permissions(apps, "felab_sim", ["parameterset"])


def revoke(apps, schema_editor):
    revoke_content_permissions(apps, "felab_sim", ["parameterset"])


class Migration(migrations.Migration):
    dependencies = [
        ("felab_sim", "0004_parameter_sets"),
        ("lessons", "0002_instructors_group"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

from django.db import migrations

from quiz.instructors import grant_view_permissions, revoke_view_permissions


def grant(apps, schema_editor):
    grant_view_permissions(apps)


def revoke(apps, schema_editor):
    revoke_view_permissions(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("quiz", "0004_every_review_has_a_showing"),
        ("lessons", "0002_instructors_group"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

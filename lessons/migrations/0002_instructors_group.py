from django.db import migrations

from lessons.instructors import grant_content_permissions, revoke_content_permissions

LESSON_CONTENT = ["course", "lesson", "card", "cardterm", "glossaryterm"]


def grant(apps, schema_editor):
    grant_content_permissions(apps, "lessons", LESSON_CONTENT)


def revoke(apps, schema_editor):
    revoke_content_permissions(apps, "lessons", LESSON_CONTENT)


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

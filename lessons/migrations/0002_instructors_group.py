from django.db import migrations

# Frozen here, as it was when this migration was written: a migration must not depend on today's
# code (accounts.instructors).
INSTRUCTORS_GROUP = "Instructors"
ACTIONS = ("add", "change", "delete", "view")


def _content_permissions(apps, model_names):
    Permission = apps.get_model("auth", "Permission")
    codenames = [f"{action}_{model}" for model in model_names for action in ACTIONS]
    return Permission.objects.filter(content_type__app_label="lessons", codename__in=codenames)


def grant_content_permissions(apps, model_names):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; create them now so the
    # group can hold them on a fresh database.
    app_config = apps.get_app_config("lessons")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    group.permissions.add(*_content_permissions(apps, model_names))


def revoke_content_permissions(apps, model_names):
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is not None:
        group.permissions.remove(*_content_permissions(apps, model_names))


LESSON_CONTENT = ["course", "lesson", "card", "cardterm", "glossaryterm"]


def grant(apps, schema_editor):
    grant_content_permissions(apps, LESSON_CONTENT)


def revoke(apps, schema_editor):
    revoke_content_permissions(apps, LESSON_CONTENT)


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

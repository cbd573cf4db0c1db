from django.db import migrations

# Frozen here, as they were when this migration was written: a migration must not depend on
# today's code (accounts.instructors).
INSTRUCTORS_GROUP = "Instructors"
# The student's profile (their consent flag, tied to their account) stays out.
VIEWABLE_MODELS = ["review", "showing", "cardstate", "layeropening"]


def _view_permissions(apps):
    Permission = apps.get_model("auth", "Permission")
    codenames = [f"view_{model}" for model in VIEWABLE_MODELS]
    return Permission.objects.filter(content_type__app_label="quiz", codename__in=codenames)


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; make them now so the
    # group can hold them on a fresh database.
    app_config = apps.get_app_config("quiz")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    group.permissions.add(*_view_permissions(apps))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is not None:
        group.permissions.remove(*_view_permissions(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("quiz", "0004_every_review_has_a_showing"),
        ("lessons", "0002_instructors_group"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

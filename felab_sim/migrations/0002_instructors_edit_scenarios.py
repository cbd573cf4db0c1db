from django.db import migrations

# Frozen here, as they were when this migration was written: a migration must not depend on
# another app's code as it is today (accounts.instructors).
INSTRUCTORS_GROUP = "Instructors"
ACTIONS = ("add", "change", "delete", "view")
MODELS = ["scenario"]


def _permissions(apps):
    Permission = apps.get_model("auth", "Permission")
    codenames = [f"{action}_{model}" for model in MODELS for action in ACTIONS]
    return Permission.objects.filter(content_type__app_label="felab_sim", codename__in=codenames)


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; create them now so the
    # group can hold them on a fresh database.
    app_config = apps.get_app_config("felab_sim")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    group.permissions.add(*_permissions(apps))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is not None:
        group.permissions.remove(*_permissions(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("felab_sim", "0001_initial"),
        ("lessons", "0002_instructors_group"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

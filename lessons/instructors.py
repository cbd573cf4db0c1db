"""The Instructors group: may add, change, delete and view lesson content, nothing else.

Migrations call grant_lesson_content() with their historical app registry, so each
app that adds instructor-editable models grants them in its own migration.
"""

from typing import Any

INSTRUCTORS_GROUP = "Instructors"
ACTIONS = ("add", "change", "delete", "view")


def grant_content_permissions(apps: Any, app_label: str, model_names: list[str]) -> None:
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; create them now so the
    # group can hold them on a fresh database.
    app_config = apps.get_app_config(app_label)
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    codenames = [f"{action}_{model}" for model in model_names for action in ACTIONS]
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
    )


def revoke_content_permissions(apps: Any, app_label: str, model_names: list[str]) -> None:
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is None:
        return
    codenames = [f"{action}_{model}" for model in model_names for action in ACTIONS]
    group.permissions.remove(
        *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
    )

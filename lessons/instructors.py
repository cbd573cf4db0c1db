"""The Instructors group: may add, change, delete and view lesson content, nothing else.

is_instructor() is the one test of who counts as an instructor, for every app.

lessons' own migrations call grant_content_permissions() with their historical app registry;
another app that adds instructor-editable models grants them in its own migration, with its own
frozen copy of the group's name (a migration imports no other app's code).
"""

from typing import Any

INSTRUCTORS_GROUP = "Instructors"
ACTIONS = ("add", "change", "delete", "view")


def is_instructor(user: Any) -> bool:
    """Superusers and members of the Instructors group; never an anonymous visitor."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    # Asked by the nav on every page and again by the view: remember it on the user.
    cached = getattr(user, "_felab_is_instructor", None)
    if cached is None:
        cached = user.groups.filter(name=INSTRUCTORS_GROUP).exists()
        user._felab_is_instructor = cached
    return cached


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

"""Instructors may look at what students recorded, in the admin, and change none of it.

Called with an app registry (django.apps.apps) by tests whose transactional flush removed the
group; migration 0005 keeps its own frozen copy, as migrations must not depend on today's code.
"""

from typing import Any

from lessons.instructors import INSTRUCTORS_GROUP

# The student's profile (their consent flag, tied to their account) stays out.
VIEWABLE_MODELS = ["review", "showing", "cardstate", "layeropening"]


def _view_permissions(apps: Any) -> Any:
    Permission = apps.get_model("auth", "Permission")
    codenames = [f"view_{model}" for model in VIEWABLE_MODELS]
    return Permission.objects.filter(content_type__app_label="quiz", codename__in=codenames)


def grant_view_permissions(apps: Any) -> None:
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; make them now so the
    # group can hold them on a fresh database.
    app_config = apps.get_app_config("quiz")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)

    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    group.permissions.add(*_view_permissions(apps))


def revoke_view_permissions(apps: Any) -> None:
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is not None:
        group.permissions.remove(*_view_permissions(apps))

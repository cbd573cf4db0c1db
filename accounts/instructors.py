"""The Instructors group: who counts as an instructor, and what the group may do.

is_instructor() is the one test of who counts as an instructor, for every app. The group may
add, change, delete and view lesson content and the simulator's scenarios and parameter sets,
and only view what students recorded (quiz), but for the mistakes they name from the class's
answers (quiz.ClassMistake), which they edit. Each app's own migrations grant those, each with
a frozen copy of the group's name and of these helpers (a migration imports no other app's
code); grant_permissions() gives them back after a transactional test's flush removed them.
"""

from typing import Any

INSTRUCTORS_GROUP = "Instructors"
# The attribute that remembers the answer on a user: set by accounts.backends when it loads the
# request's user, or by is_instructor() after asking the database once.
INSTRUCTOR_FLAG = "felab_is_instructor"
CONTENT_ACTIONS = ("add", "change", "delete", "view")
VIEW_ONLY = ("view",)


def is_instructor(user: Any) -> bool:
    """Superusers and members of the Instructors group; never an anonymous visitor."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    # Asked by the nav on every page and again by the view: remember it on the user.
    cached = getattr(user, INSTRUCTOR_FLAG, None)
    if cached is None:
        cached = user.groups.filter(name=INSTRUCTORS_GROUP).exists()
        setattr(user, INSTRUCTOR_FLAG, cached)
    return cached


def _permissions(apps: Any, app_label: str, model_names: list[str], actions: tuple[str, ...]) -> Any:
    Permission = apps.get_model("auth", "Permission")
    codenames = [f"{action}_{model}" for model in model_names for action in actions]
    return Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)


def grant_permissions(
    apps: Any, app_label: str, model_names: list[str], actions: tuple[str, ...] = CONTENT_ACTIONS
) -> None:
    """Give the group ``actions`` on an app's models, creating the group if need be."""
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; create them now so the
    # group can hold them on a fresh database.
    app_config = apps.get_app_config(app_label)
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)

    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    group.permissions.add(*_permissions(apps, app_label, model_names, actions))


def revoke_permissions(
    apps: Any, app_label: str, model_names: list[str], actions: tuple[str, ...] = CONTENT_ACTIONS
) -> None:
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=INSTRUCTORS_GROUP).first()
    if group is not None:
        group.permissions.remove(*_permissions(apps, app_label, model_names, actions))

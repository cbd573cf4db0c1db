"""How a request's user is loaded: with whether they are an instructor, in the same query.

Every page asks is_instructor() (the nav's links, drafts shown or not), which would otherwise
cost a query of the user's groups on each request. The flag is read fresh with the user on
every request, so joining or leaving the Instructors group takes effect on the next page.
"""

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Exists, OuterRef, QuerySet

from serving.prepared import PreparedQuery

from .instructors import INSTRUCTOR_FLAG, INSTRUCTORS_GROUP


def users_with_flag(pk: Any) -> QuerySet:
    """The user of this pk, annotated with whether they are an instructor."""
    User = get_user_model()
    in_group = Group.objects.filter(user=OuterRef("pk"), name=INSTRUCTORS_GROUP)
    return User._default_manager.annotate(**{INSTRUCTOR_FLAG: Exists(in_group)}).filter(pk=pk)


@cache
def _user_lookup() -> PreparedQuery:
    """Asked on every signed-in request, and Django's ORM takes far longer to build this query
    than the database to answer it: its SQL is built once per process (serving/prepared.py)."""
    return PreparedQuery(get_user_model(), users_with_flag, pk=-7_340_211)


class InstructorFlagBackend(ModelBackend):
    def authenticate(
        self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any
    ):
        user = super().authenticate(request, username, password, **kwargs)
        if user is None:
            # Stops Django trying the next backend, ModelBackend, which would hash the
            # password a second time for the same answer; Django reports a failed log in.
            raise PermissionDenied
        return user

    def get_user(self, user_id: Any):
        try:
            pk = get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        users = _user_lookup().run(pk=pk)
        if not users or not self.user_can_authenticate(users[0]):
            return None
        user = users[0]
        setattr(user, INSTRUCTOR_FLAG, bool(getattr(user, INSTRUCTOR_FLAG)))
        return user

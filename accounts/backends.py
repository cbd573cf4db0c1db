"""How a request's user is loaded: with whether they are an instructor, in the same query.

Every page asks is_instructor() (the nav's links, drafts shown or not), which would otherwise
cost a query of the user's groups on each request. The flag is read fresh with the user on
every request, so joining or leaving the Instructors group takes effect on the next page.
"""

import weakref
from functools import cache, lru_cache, partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Exists, OuterRef, QuerySet

from serving.prepared import PreparedQuery

from .instructors import INSTRUCTOR_FLAG, INSTRUCTORS_GROUP
from .session_users import read_with_session

USER_STAND_IN = -7_340_211  # no user's pk


def users_with_flag(pk: Any) -> QuerySet:
    """The user of this pk, annotated with whether they are an instructor."""
    User = get_user_model()
    in_group = Group.objects.filter(user=OuterRef("pk"), name=INSTRUCTORS_GROUP)
    return User._default_manager.annotate(**{INSTRUCTOR_FLAG: Exists(in_group)}).filter(pk=pk)


@cache
def _user_lookup() -> PreparedQuery:
    """One user with the flag, its SQL built once per process (serving/prepared.py): Django's ORM
    takes about ten times longer to build this query than the database to answer it
    (bench/bench_http.py), and it is asked on every signed-in request."""
    return PreparedQuery(get_user_model(), users_with_flag, pk=USER_STAND_IN)


@lru_cache(maxsize=4096)
def _auth_hash(secret_key: str, password: str) -> str:
    """Django's session auth hash of a password field under one SECRET_KEY."""
    return get_user_model()(password=password)._get_session_auth_hash(secret=secret_key)


def _session_auth_hash(user: weakref.ref) -> str:
    """``user.get_session_auth_hash()``, remembered per process by the password field it is an
    HMAC of: Django checks it on every signed-in request (about 17 µs of /progress/'s 0.7 ms
    in-process). The field is read at each call, so a password changed anywhere gives a new hash
    on the next request, and a change within this request (update_session_auth_hash) at once.
    The user is held weakly: a reference to itself would leave every request's user to the
    garbage collector. (A weak reference does not pickle: nothing here pickles a request's user.)"""
    return _auth_hash(settings.SECRET_KEY, user().password)


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
        # Read in the same statement as the request's session when it could be (accounts/sessions.py):
        # Django hands over the pk it converted from the session's data, the one that row was read for.
        users = read_with_session(user_id)
        if not users:
            try:
                pk = get_user_model()._meta.pk.to_python(user_id)
            except ValidationError:
                return None
            users = _user_lookup().run(pk=pk)
        if not users or not self.user_can_authenticate(users[0]):
            return None
        user = users[0]
        setattr(user, INSTRUCTOR_FLAG, bool(getattr(user, INSTRUCTOR_FLAG)))
        user.get_session_auth_hash = partial(_session_auth_hash, weakref.ref(user))
        return user

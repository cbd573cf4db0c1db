"""A session engine (production without Redis) that reads the session's user with its row.

``SESSION_ENGINE = "accounts.sessions"``: serving.sessions.db (Django's database engine, its SQL
compiled once per process), which also reads the user in the same statement once it knows whose
the session is. A session's key names one user for as long as the key lives (Django gives a
session a new key at every log in and log out), so the pk its data named is remembered per key in
each process. The next read asks for the row and that user with their Instructors flag
together (accounts.backends.users_with_flag), and leaves the user on the store for
accounts/session_users.py to hand to the backend. The pk is only ever a guess: the backend takes
the row only when it is the pk the session's data names, and runs its own query otherwise.

A session read this way is exactly the row Django's engine reads (the same key, the same expiry
test at the same moment); a user deleted since (no row) is read the ordinary way, in two queries.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Subquery
from django.utils import timezone

from serving.prepared import PreparedQuery
from serving.sessions import db

from .backends import USER_STAND_IN, users_with_flag

# The session row's data on the joined read's user, taken off again before anyone sees it.
_SESSION_DATA = "felab_session_data"

# Session keys seen in this process, each with the pk its data named (most recently used last).
SESSION_USERS_KEPT = 20_000
_session_users: OrderedDict[str, Any] = OrderedDict()
_session_users_lock = threading.Lock()


@cache
def _session_with_user() -> PreparedQuery:
    """The user of a pk with their flag and the session row of a key, if it has not expired."""
    Session = db.SessionStore.get_model_class()

    def build(pk: Any, key: str, moment: datetime) -> Any:
        row = Session._default_manager.filter(session_key=key, expire_date__gt=moment)
        return users_with_flag(pk).annotate(**{_SESSION_DATA: Subquery(row.values("session_data")[:1])})

    return PreparedQuery(
        get_user_model(),
        build,
        pk=USER_STAND_IN,
        key="felab-any-session-key-0b9e41d2",
        moment=datetime(2001, 2, 3, 4, 5, 7, 654321, tzinfo=UTC),
    )


def _remember(session_key: str, pk: Any) -> None:
    if _session_users.get(session_key) == pk:  # known already (every read after the first)
        return
    with _session_users_lock:
        _session_users[session_key] = pk
        _session_users.move_to_end(session_key)
        if len(_session_users) > SESSION_USERS_KEPT:
            _session_users.popitem(last=False)


def _forget(session_key: str) -> None:
    with _session_users_lock:
        _session_users.pop(session_key, None)


class SessionStore(db.SessionStore):
    # The user read with the row, until accounts.backends takes it (once).
    user_read_with_session: Any = None

    def load(self) -> dict[str, Any]:
        pk = _session_users.get(self.session_key)
        if pk is not None:
            users = _session_with_user().run(pk=pk, key=self.session_key, moment=timezone.now())
            if users:
                user = users[0]
                row_data = user.__dict__.pop(_SESSION_DATA)
                if row_data is None:  # no such session, or it expired: as Django does
                    _forget(self.session_key)
                    self._session_key = None
                    return {}
                self.user_read_with_session = user
                data = self.decode(row_data)
                if data.get(SESSION_KEY) != str(pk):  # the session's user is not the one remembered
                    self._remember_user(data)
                return data
            _forget(self.session_key)  # that user is gone: the session alone, as Django reads it
        data = super().load()
        self._remember_user(data)
        return data

    def _remember_user(self, data: dict[str, Any]) -> None:
        if self.session_key and SESSION_KEY in data:
            with contextlib.suppress(ValidationError):  # not a pk: nothing to remember
                _remember(self.session_key, get_user_model()._meta.pk.to_python(data[SESSION_KEY]))

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

What that statement read is then kept in the process (:class:`_Snapshot`, at most
``SNAPSHOT_MAX_AGE_S``) while the ``accounts`` token holds (serving/content_cache.py's
SharedToken: a file beside the host's file cache, one ``pread`` a request). A worker's next
request of the same session takes the row and user from it instead of the database: under wrk,
that statement was nearly all a signed-in page's cost over an anonymous one in gunicorn (/sim/
signed in went from 0.57-0.59 of the trivial view to 0.69-0.75, anonymous 0.68-0.76 in the same
runs; docs/benchmarks.md, stop 40). The token is redrawn, before and after the commit, by everything that can change what
was kept:

- this engine's own writes to an existing session (log out, log in, a key cycled, a password
  change's new hash, data saved), but not a new key's first save, which nothing can have kept;
- every save or delete of a user or a group, and every change to a user's groups (signals).

So a log out, a password change or an account an instructor deactivates in the admin reach
every worker's next request. Bulk writes send no signal (``QuerySet.update()`` of users or
session rows): they reach a page once its snapshot is ``SNAPSHOT_MAX_AGE_S`` old, or at once
after ``accounts_changed()``. Without Redis the token is one host's, as the content version is:
more than one host needs REDIS_URL (docs/deploy.md), whose sessions do not use this engine.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db.models import Subquery
from django.utils import timezone

from serving.content_cache import SharedToken
from serving.prepared import PreparedQuery
from serving.sessions import db

from .backends import USER_STAND_IN, users_with_flag
from .instructors import INSTRUCTOR_FLAG

# The session row's data and expiry on the joined read's user, taken off again before anyone sees them.
_SESSION_DATA = "felab_session_data"
_SESSION_EXPIRY = "felab_session_expiry"

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
        return users_with_flag(pk).annotate(
            **{
                _SESSION_DATA: Subquery(row.values("session_data")[:1]),
                _SESSION_EXPIRY: Subquery(row.values("expire_date")[:1]),
            }
        )

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
        _snapshots.pop(session_key, None)


# Redrawn by every change that could make a kept snapshot wrong (the module's docstring).
ACCOUNTS = SharedToken("accounts")
ACCOUNTS.watch(get_user_model(), Group)
accounts_changed = ACCOUNTS.changed

# How long a snapshot serves at most: what a bulk write, which redraws no token, may wait.
SNAPSHOT_MAX_AGE_S = 10.0
# Snapshots kept per process (the most recently read from the database last): about a kilobyte each.
SNAPSHOTS_KEPT = 4096
# The snapshots' clock; the tests move it.
clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class _Snapshot:
    """What the joined statement read for one session key, under one ``accounts`` token."""

    token: str
    taken: float  # clock()
    expire_date: datetime
    session_data: str  # the row's text, decoded afresh for each request
    database: str
    user_values: tuple[Any, ...]  # the user's concrete fields, in the model's order
    is_instructor: bool

    def user(self) -> Any:
        """A new instance of the user for one request: nothing a request sets on it is shared."""
        user = get_user_model().from_db(self.database, _user_attnames(), self.user_values)
        setattr(user, INSTRUCTOR_FLAG, self.is_instructor)
        return user


@cache
def _user_attnames() -> tuple[str, ...]:
    return tuple(field.attname for field in get_user_model()._meta.concrete_fields)


_snapshots: OrderedDict[str, _Snapshot] = OrderedDict()


def _keep(session_key: str, snapshot: _Snapshot) -> None:
    with _session_users_lock:
        _snapshots[session_key] = snapshot
        _snapshots.move_to_end(session_key)
        if len(_snapshots) > SNAPSHOTS_KEPT:
            _snapshots.popitem(last=False)


def _kept(session_key: str, token: str) -> _Snapshot | None:
    """The key's snapshot if it is this token's, young enough, and its session not expired."""
    snapshot = _snapshots.get(session_key)
    if (
        snapshot is None
        or snapshot.token != token
        or clock() - snapshot.taken >= SNAPSHOT_MAX_AGE_S
        or snapshot.expire_date <= timezone.now()
    ):
        return None
    return snapshot


class SessionStore(db.SessionStore):
    # The user read with the row, until accounts.backends takes it (once).
    user_read_with_session: Any = None

    def load(self) -> dict[str, Any]:
        pk = _session_users.get(self.session_key)
        if pk is not None:
            # Read before the database: a change committed after this read redraws it.
            token = ACCOUNTS.read()
            snapshot = _kept(self.session_key, token)
            if snapshot is not None:
                self.user_read_with_session = snapshot.user()
                return self.decode(snapshot.session_data)
            users = _session_with_user().run(pk=pk, key=self.session_key, moment=timezone.now())
            if users:
                user = users[0]
                row_data = user.__dict__.pop(_SESSION_DATA)
                expire_date = user.__dict__.pop(_SESSION_EXPIRY)
                if row_data is None:  # no such session, or it expired: as Django does
                    _forget(self.session_key)
                    self._session_key = None
                    return {}
                self.user_read_with_session = user
                data = self.decode(row_data)
                if data.get(SESSION_KEY) != str(pk):  # the session's user is not the one remembered
                    self._remember_user(data)
                else:
                    _keep(self.session_key, _snapshot_of(token, expire_date, row_data, user))
                return data
            _forget(self.session_key)  # that user is gone: the session alone, as Django reads it
        data = super().load()
        self._remember_user(data)
        return data

    def save(self, must_create: bool = False) -> None:
        # A new key's first save needs no new token: no process can have kept a row of it.
        existing = self.session_key is not None and not must_create
        super().save(must_create)
        if existing:
            accounts_changed()

    def delete(self, session_key: str | None = None) -> None:
        # A store without a key deletes nothing (a visitor never saved, logging out): no token.
        deleted = session_key is not None or self.session_key is not None
        super().delete(session_key)
        if deleted:
            accounts_changed()

    def _remember_user(self, data: dict[str, Any]) -> None:
        if self.session_key and SESSION_KEY in data:
            with contextlib.suppress(ValidationError):  # not a pk: nothing to remember
                _remember(self.session_key, get_user_model()._meta.pk.to_python(data[SESSION_KEY]))


def _snapshot_of(token: str, expire_date: datetime, session_data: str, user: Any) -> _Snapshot:
    return _Snapshot(
        token=token,
        taken=clock(),
        expire_date=expire_date,
        session_data=session_data,
        database=user._state.db,  # set by from_db, as every user the statement reads is built
        user_values=tuple(user.__dict__[attname] for attname in _user_attnames()),
        is_instructor=bool(getattr(user, INSTRUCTOR_FLAG)),
    )

"""The request's user read in the same SQL statement as its session row, where it can be.

Every signed-in request reads its session row, then its user: two round trips to the database
for rows that belong together. accounts/sessions.py's engine reads both at once when it knows
whose the session is, and leaves the user it read on the session store. Django's own
``auth.get_user`` then does everything as before (which backend, the session's hash against the
password, the fallbacks, flushing a session that no longer verifies); only the backend's row
comes from that statement instead of a second one (accounts.backends), and only for the pk the
session's own data names.

The handoff is scoped to the one call of ``auth.get_user`` that this middleware makes for its
request: no other request, thread or later call can be given the row.
"""

from __future__ import annotations

from contextvars import ContextVar
from functools import partial
from typing import Any

from django.contrib import auth
from django.contrib.auth import middleware
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

_request_session: ContextVar[Any] = ContextVar("felab_request_session", default=None)


def read_with_session(pk: Any) -> list[Any]:
    """The user the request's session store read with its row, if it is this pk's; else []."""
    session = _request_session.get()
    user = getattr(session, "user_read_with_session", None)
    if user is None or user.pk != pk:
        return []
    session.user_read_with_session = None  # given once
    return [user]


def _request_user(request: HttpRequest) -> Any:
    """django.contrib.auth.middleware.get_user, with the session's user row on offer."""
    if not hasattr(request, "_cached_user"):
        offered = _request_session.set(request.session)
        try:
            request._cached_user = auth.get_user(request)
        finally:
            _request_session.reset(offered)
    return request._cached_user


class AuthenticationMiddleware(middleware.AuthenticationMiddleware):
    """Django's, whose lazy ``request.user`` takes the session's user row when there is one."""

    def process_request(self, request: HttpRequest) -> None:
        if not hasattr(request, "session"):
            super().process_request(request)  # Django's error: no session middleware before it
        request.user = SimpleLazyObject(lambda: _request_user(request))
        request.auser = partial(middleware.auser, request)

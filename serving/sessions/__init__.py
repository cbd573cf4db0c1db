"""Session engines that read a session row with SQL compiled once per process.

Django's database engines build the same ``SELECT … WHERE session_key = %s AND expire_date > %s``
through the ORM on every request that carries a session cookie: about 0.6 ms of a signed-in
page's 2.6 ms in-process (cProfile, bench_http's card page, no Redis), where reading the row
itself takes a few tens of µs. These engines build that query once (serving/prepared.py) and run
it with the request's key and time, as accounts.backends does for the user. Everything else (saving,
cycling keys, expiry, the cache in front) is Django's own:

- ``serving.sessions.db``: the database only (production without Redis);
- ``serving.sessions.cached_db``: Redis (or development's memory) first, then the database.

A row's data, once its signature checks out, is remembered as its JSON by the exact text the row
holds (a bounded store per process): the same text verifies the same way, and checking the
signature again (HMAC, base64 and Django's signing wrappers) cost about 80 Python calls of
every signed-in request. Each read parses the JSON afresh, so no two requests share an object.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore as DatabaseStore
from django.utils import timezone

from ..prepared import PreparedQuery


@cache
def _session_lookup(model: type) -> PreparedQuery:
    """Django's own lookup (db.SessionStore._get_session_from_db), prepared once per session model."""
    return PreparedQuery(
        model,
        lambda key, moment: model._default_manager.filter(session_key=key, expire_date__gt=moment),
        key="felab-any-session-key-5f0c7d3e",
        moment=datetime(2001, 2, 3, 4, 5, 6, 789012, tzinfo=UTC),
    )


# Rows' data seen in this process (most recently used last), each as the JSON it decoded to.
VERIFIED_ROWS_KEPT = 4096
_verified: OrderedDict[str, str] = OrderedDict()
_verified_lock = threading.Lock()
_JSON_SERIALIZERS = {
    "django.contrib.sessions.serializers.JSONSerializer",
    "django.core.signing.JSONSerializer",
}


class CompiledLookup:
    """Mixed into a database-backed SessionStore: its row read with precompiled SQL, its data's
    signature checked once per distinct row text."""

    def decode(self: Any, session_data: str) -> dict[str, Any]:
        if settings.SESSION_SERIALIZER not in _JSON_SERIALIZERS:  # only JSON round-trips exactly
            return super().decode(session_data)
        with _verified_lock:
            text = _verified.get(session_data)
            if text is not None:
                _verified.move_to_end(session_data)
        if text is not None:
            return json.loads(text)
        decoded = super().decode(session_data)  # {} for a bad signature: not remembered
        if decoded:
            with _verified_lock:
                _verified[session_data] = json.dumps(decoded)
                if len(_verified) > VERIFIED_ROWS_KEPT:
                    _verified.popitem(last=False)
        return decoded

    def _get_session_from_db(self: Any) -> Any:
        rows = _session_lookup(self.model).run(key=self.session_key, moment=timezone.now())
        if rows:
            return rows[0]
        self._session_key = None  # as Django does: no such session, or it expired
        return None


assert hasattr(DatabaseStore, "_get_session_from_db"), "Django's database session store changed"

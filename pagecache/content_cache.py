"""What pages show the same way to every learner, built once per content version and kept in each
process's memory.

The content version is a random token (:class:`SharedToken`) in Redis, else in the database
(pagecache.models.SharedVersion), so every worker of every host reads the same one. Every content
change draws a new one: a content model's save or delete (signals), a bulk write through
:class:`ContentQuerySet`, each lesson import. A process reads the token once per request and drops
what it kept under another, so no page outlives an edit by more than the request in flight; a
token is never reused, so a lost entry costs a re-render, never a stale page.

Keep only what is the same for every learner: never a CSRF token, a learner's work or a
signed-in user's name.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, ClassVar, TypeVar

from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.core.signals import request_finished, request_started
from django.db import connection, models, transaction
from django.http import HttpRequest

from serving.cache_outage import redis_outage

T = TypeVar("T")


# Every token by its name: no two may share one.
TOKENS: dict[str, SharedToken] = {}


def _in_redis() -> bool:
    return isinstance(caches["default"], RedisCache)


class SharedToken:
    """A random token that every process reads and any process redraws when what it stands for
    changes: course content here, the simulator's run queue in felab_sim. In Redis, or in the
    database without it. A token is never reused, so a lost entry costs a rebuild, never a stale
    value."""

    def __init__(self, name: str) -> None:
        if name in TOKENS:
            raise ValueError(f"a token named {name!r} exists already")
        TOKENS[name] = self
        self.name = name
        self.cache_key = f"felab:{name}-version"
        # While Redis is down every request reads no token and draws its own, so nothing is
        # kept; a change made meanwhile could not reach the cache, so a process that saw the
        # outage draws a new token as soon as Redis answers again, and no process goes on
        # serving what it kept before the change.
        redis_outage.on_recovery(self.redraw)

    def read(self) -> str:
        """The current token; a new one if there is none (first start, or the entry was lost)."""
        if not _in_redis():
            return self._read_row()
        version = cache.get(self.cache_key)
        if version is None:
            fresh = uuid.uuid4().hex
            # add() keeps a token another process set in the meantime, so all agree on one.
            version = (
                fresh if cache.add(self.cache_key, fresh, timeout=None) else cache.get(self.cache_key, fresh)
            )
        return version

    def _read_row(self) -> str:
        from .models import SharedVersion

        # Plain SQL: it runs on nearly every request without Redis, and the ORM takes longer to
        # build the statement than the database to answer it.
        table = connection.ops.quote_name(SharedVersion._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT token FROM {table} WHERE name = %s", [self.name])
            row = cursor.fetchone()
        if row is not None:
            return row[0]
        # The first process to ask writes one; all agree on whichever was written first.
        SharedVersion.objects.bulk_create(
            [SharedVersion(name=self.name, token=uuid.uuid4().hex)], ignore_conflicts=True
        )
        return SharedVersion.objects.get(name=self.name).token

    def changed(self) -> None:
        """What the token stands for changed: every process builds what it kept again.

        A new token now, and another once the surrounding transaction commits: a request that
        read the first token before the commit may have kept what the database held before.
        """
        self.redraw()
        transaction.on_commit(self.redraw)

    def redraw(self) -> None:
        if _in_redis():
            cache.set(self.cache_key, uuid.uuid4().hex, timeout=None)
        else:
            from .models import SharedVersion

            SharedVersion.objects.update_or_create(name=self.name, defaults={"token": uuid.uuid4().hex})

    def watch(self, *watched: type[models.Model]) -> None:
        """Redraw the token whenever one of these models is saved or deleted, or has its links
        changed. Bulk writes send no signals: their querysets redraw it (:class:`TokenQuerySet`)."""
        for model in watched:
            dispatch = f"felab-{self.name}-{model._meta.label}"
            models.signals.post_save.connect(
                self._changed_by_signal, sender=model, dispatch_uid=dispatch + "-save"
            )
            models.signals.post_delete.connect(
                self._changed_by_signal, sender=model, dispatch_uid=dispatch + "-delete"
            )
            for field in model._meta.local_many_to_many:
                models.signals.m2m_changed.connect(
                    self._changed_by_signal,
                    sender=field.remote_field.through,
                    dispatch_uid=f"{dispatch}-{field.name}",
                )

    def _changed_by_signal(self, sender: type[models.Model], **kwargs: Any) -> None:
        self.changed()


CONTENT = SharedToken("content")


# The version read during the request in flight, for code that is not handed the request (a
# model's property, asked once per card on a page): "" while a request has not read it yet,
# None outside requests (commands, workers), where every call reads the cache afresh.
_version_this_request: ContextVar[str | None] = ContextVar("felab_content_version", default=None)


class _Kept:
    """One process's kept values, all under one content version; the least recently used go
    first once there are more than ``limit`` (keys may hold what a visitor sent)."""

    def __init__(self, limit: int) -> None:
        self.lock = threading.Lock()
        self.limit = limit
        self.version: str | None = None
        self.values: OrderedDict[Hashable, Any] = OrderedDict()

    def get_or_build(self, version: str, key: Hashable, build: Callable[[], T]) -> T:
        with self.lock:
            if version != self.version:
                self.version, self.values = version, OrderedDict()
            if key in self.values:
                self.values.move_to_end(key)
                return self.values[key]
        # Built outside the lock: two threads may both build the same value, which is harmless.
        value = build()
        with self.lock:
            if version == self.version:
                self.values[key] = value
                if len(self.values) > self.limit:
                    self.values.popitem(last=False)
        return value


# The course's pages and parts are a few hundred; the rest of the room is for pages keyed by
# what visitors sent (a calculator's settings), so that no stream of new addresses grows memory.
_kept = _Kept(limit=1024)


def _content_version() -> str:
    """The content version, read once per request and on every call outside one."""
    version = _version_this_request.get()
    if not version:
        fresh = CONTENT.read()
        if version == "":
            _version_this_request.set(fresh)
        version = fresh
    return version


def _request_token(request: HttpRequest, token: SharedToken) -> str:
    """``token``'s value for this request, read once per request."""
    attribute = f"_felab_{token.name}_version"
    version = getattr(request, attribute, None)
    if version is None:
        version = _content_version() if token is CONTENT else token.read()
        setattr(request, attribute, version)
    return version


def kept(request: HttpRequest, key: Hashable, build: Callable[[], T], token: SharedToken | None = None) -> T:
    """``build()``'s value, built once per content version in this process (and, with ``token``,
    again whenever that token changes too: the simulator's run queue).

    ``key`` must name everything the value depends on besides course content (for example
    whether drafts are shown). It never holds a learner's own state: render that per request.
    An exception from ``build`` (a 404) is raised and nothing is kept.
    """
    if token is not None:
        key = (token.name, _request_token(request, token), key)
    return _kept.get_or_build(_request_token(request, CONTENT), key, build)


def kept_without_request(key: Hashable, build: Callable[[], T]) -> T:
    """:func:`kept` for code that has no request (a model's property, asked once per card: 80
    times on one page)."""
    return _kept.get_or_build(_content_version(), key, build)


def _request_begins(**kwargs: Any) -> None:
    _version_this_request.set("")


def _request_ends(**kwargs: Any) -> None:
    _version_this_request.set(None)


request_started.connect(_request_begins, dispatch_uid="felab-content-version-begins")
request_finished.connect(_request_ends, dispatch_uid="felab-content-version-ends")


class TokenQuerySet(models.QuerySet):
    """A queryset whose bulk writes, which send no signals, redraw its ``token``."""

    token: ClassVar[SharedToken]

    def update(self, **kwargs: Any) -> int:
        count = super().update(**kwargs)
        self.token.changed()
        return count

    def bulk_create(self, *args: Any, **kwargs: Any) -> list:
        created = super().bulk_create(*args, **kwargs)
        self.token.changed()
        return created

    def bulk_update(self, *args: Any, **kwargs: Any) -> int:
        count = super().bulk_update(*args, **kwargs)
        self.token.changed()
        return count


class ContentQuerySet(TokenQuerySet):
    """A content model's queryset: bulk writes change the content version too."""

    token = CONTENT


def drop_kept_when_a_template_changes(sender: Any, file_path: Any, **kwargs: Any) -> None:
    """runserver's autoreloader saw a file change: a template edit must show on the next request.

    Django reloads templates without restarting, but what is kept was rendered from the old ones.
    """
    if str(file_path).endswith(".html"):
        CONTENT.redraw()

"""What pages show the same way to every learner, built once per content version and kept in each
process's memory.

The content version is a random token in Django's cache (Redis across hosts, memory in
development), or beside a host's file cache in a file of its own that its workers share
(serving/version_file.py). Every change to course content draws a new token:
each save or delete of a content model (signals), each bulk update or insert through a
:class:`ContentQuerySet`, and each lesson import. A process compares the token once per request
and drops everything it kept under another one, so no page outlives an edit by more than the
request in flight. A token is never reused, so a cache entry that is evicted or lost costs only
a re-render, never a stale page.

What is kept is learner-independent by construction: the card as fetched for its page (with its
rendered Markdown and live numbers), its neighbours, and template fragments marked with
``{% content_fragment %}`` (serving/templatetags/content_fragments.py). Never keep anything that
holds a CSRF token, a learner's work or a signed-in user's name.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.db import models, transaction
from django.http import HttpRequest

from .cache_outage import redis_outage
from .version_file import VersionFile

VERSION_KEY = "felab:content-version"
_REQUEST_ATTRIBUTE = "_felab_content_version"

T = TypeVar("T")


FILE_CACHE = "django.core.cache.backends.filebased.FileBasedCache"


def _version_file() -> VersionFile | None:
    """The token's own file, where the cache is one host's file cache; else None (the cache)."""
    config = settings.CACHES["default"]
    return _version_file_in(str(config["LOCATION"])) if config["BACKEND"] == FILE_CACHE else None


@functools.cache
def _version_file_in(directory: str) -> VersionFile:
    return VersionFile(directory)


def content_version() -> str:
    """The current token; a new one if the cache has none (first start, or the entry was lost)."""
    if (version_file := _version_file()) is not None:
        return version_file.read() or version_file.add(uuid.uuid4().hex)
    version = cache.get(VERSION_KEY)
    if version is None:
        fresh = uuid.uuid4().hex
        # add() keeps a token another process set in the meantime, so all agree on one.
        version = fresh if cache.add(VERSION_KEY, fresh, timeout=None) else cache.get(VERSION_KEY, fresh)
    return version


def content_changed() -> None:
    """Course content changed: every process builds its pages again from the database.

    A new token now, and another once the surrounding transaction commits: a request that read
    the first token before the commit may have kept what the database held before the change.
    """
    _new_version()
    transaction.on_commit(_new_version)


def _new_version() -> None:
    if (version_file := _version_file()) is not None:
        version_file.write(uuid.uuid4().hex)
    else:
        cache.set(VERSION_KEY, uuid.uuid4().hex, timeout=None)


# While Redis is down every request reads no token and draws its own, so nothing is kept and
# every page is built from the database; a content edit made meanwhile could not reach the
# cache, so a process that saw the outage draws a new token as soon as Redis answers again,
# and no process goes on serving what it kept before the edit.
redis_outage.on_recovery(_new_version)


class _Kept:
    """One process's kept values, all under one content version; the least recently used go
    first once there are more than ``limit`` (values keyed by what a visitor typed need one)."""

    def __init__(self, limit: int | None = None) -> None:
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
                if self.limit is not None and len(self.values) > self.limit:
                    self.values.popitem(last=False)
        return value


_kept = _Kept()
# Pages whose settings come from the address (the calculators'): a bounded number per process.
INPUT_KEPT_LIMIT = 512
_kept_for_input = _Kept(limit=INPUT_KEPT_LIMIT)
# Fragments keyed by how a learner's progress looks (serving/templatetags/content_fragments.py,
# ``bounded``): as many as patterns of study, a few kB each.
LOOK_KEPT_LIMIT = 1024
_kept_by_look = _Kept(limit=LOOK_KEPT_LIMIT)


def request_version(request: HttpRequest) -> str:
    """The content version for this request, read from the cache once per request."""
    version = getattr(request, _REQUEST_ATTRIBUTE, None)
    if version is None:
        version = content_version()
        setattr(request, _REQUEST_ATTRIBUTE, version)
    return version


def kept(request: HttpRequest, key: Hashable, build: Callable[[], T]) -> T:
    """``build()``'s value, built once per content version in this process.

    ``key`` must name everything the value depends on besides course content (for example
    whether drafts are shown). An exception from ``build`` (a 404) is raised and nothing is kept.
    """
    return _kept.get_or_build(request_version(request), key, build)


def kept_for_input(request: HttpRequest, key: Hashable, build: Callable[[], T]) -> T:
    """:func:`kept`, for values keyed by what a visitor sent (a query string): only the
    ``INPUT_KEPT_LIMIT`` most recently used are kept, so no stream of new addresses grows memory."""
    return _kept_for_input.get_or_build(request_version(request), key, build)


def kept_by_look(request: HttpRequest, key: Hashable, build: Callable[[], T]) -> T:
    """:func:`kept`, for a part keyed by how a learner's progress looks (which cards are rated,
    due, and when they come back): the ``LOOK_KEPT_LIMIT`` most recently used. Parts every
    learner shares (a lesson nobody touched) are used on nearly every request and stay."""
    return _kept_by_look.get_or_build(request_version(request), key, build)


# The version read during the request in flight, for code that is not handed the request (a
# model's property, asked once per card on a page): "" while a request has not read it yet,
# None outside requests (commands, workers), where every call reads the cache afresh.
_version_this_request: ContextVar[str | None] = ContextVar("felab_content_version", default=None)


def _request_begins(**kwargs: Any) -> None:
    _version_this_request.set("")


def _request_ends(**kwargs: Any) -> None:
    _version_this_request.set(None)


request_started.connect(_request_begins, dispatch_uid="felab-content-version-begins")
request_finished.connect(_request_ends, dispatch_uid="felab-content-version-ends")


def kept_without_request(key: Hashable, build: Callable[[], T]) -> T:
    """:func:`kept` for code that has no request (a model's property): the version is read from
    the cache once per request (a page of 80 cards asks 80 times), and on every call outside one."""
    version = _version_this_request.get()
    if not version:
        fresh = content_version()
        if version == "":
            _version_this_request.set(fresh)
        version = fresh
    return _kept.get_or_build(version, key, build)


class ContentQuerySet(models.QuerySet):
    """A content model's queryset: bulk writes, which send no signals, change the version too."""

    def update(self, **kwargs: Any) -> int:
        count = super().update(**kwargs)
        content_changed()
        return count

    def bulk_create(self, *args: Any, **kwargs: Any) -> list:
        created = super().bulk_create(*args, **kwargs)
        content_changed()
        return created

    def bulk_update(self, *args: Any, **kwargs: Any) -> int:
        count = super().bulk_update(*args, **kwargs)
        content_changed()
        return count


def _changed_by_signal(sender: type[models.Model], **kwargs: Any) -> None:
    content_changed()


def watch(*content_models: type[models.Model]) -> None:
    """Change the version whenever one of these models is saved, deleted or has its links changed."""
    for model in content_models:
        dispatch = f"felab-content-{model._meta.label}"
        models.signals.post_save.connect(_changed_by_signal, sender=model, dispatch_uid=dispatch + "-save")
        models.signals.post_delete.connect(
            _changed_by_signal, sender=model, dispatch_uid=dispatch + "-delete"
        )
        for field in model._meta.local_many_to_many:
            models.signals.m2m_changed.connect(
                _changed_by_signal, sender=field.remote_field.through, dispatch_uid=f"{dispatch}-{field.name}"
            )


def drop_kept_when_a_template_changes(sender: Any, file_path: Any, **kwargs: Any) -> None:
    """runserver's autoreloader saw a file change: a template edit must show on the next request.

    Django reloads templates without restarting, but what is kept was rendered from the old ones.
    """
    if str(file_path).endswith(".html"):
        _new_version()

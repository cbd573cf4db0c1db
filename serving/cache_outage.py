"""Redis is a cache here: when it is down the site carries on from the database.

Everything kept in Redis can be lost without losing anything that matters: sessions are
``cached_db`` (also in the database), the content version is redrawn (pagecache/content_cache.py),
and rate limits count in the database instead (serving/ratelimit.py). :class:`ResilientRedisCache`
is Django's ``RedisCache`` whose failures read as misses and whose writes are dropped, so no
page fails for the cache's sake. :data:`redis_outage` remembers the outage: it logs once a
minute per process rather than once per request, for a few seconds after a failure no request
waits on Redis at all, and when Redis answers again the process first drops what went stale
in it meanwhile (sessions here, the content version in pagecache/content_cache.py). See
docs/deploy.md, "When a part is down".
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from importlib import import_module
from typing import Any

import redis
from django.conf import settings
from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.cached_db import KEY_PREFIX as SESSION_KEY_PREFIX
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger("felab.outage")

# The outages' clock; the tests move it to see the log repeat after a minute.
clock: Callable[[], float] = time.monotonic
LOG_EVERY_S = 60.0
# After a failure, requests skip Redis this long instead of each waiting for its timeout.
RETRY_AFTER_S = 2.0


class Outage:
    """One dependency's failures in this process: logged at most once a minute, and whether to
    try it now. ``on_recovery`` callbacks run once when it answers again after a failure."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self.down_since: float | None = None
        self._last_try = 0.0
        self._last_log: float | None = None
        self._failures_since_log = 0
        self._on_recovery: list[Callable[[], None]] = []

    def on_recovery(self, callback: Callable[[], None]) -> None:
        if callback not in self._on_recovery:
            self._on_recovery.append(callback)

    def should_try(self) -> bool:
        with self._lock:
            return self.down_since is None or clock() - self._last_try >= RETRY_AFTER_S

    def failed(self, error: BaseException, doing: str) -> None:
        now = clock()
        with self._lock:
            if self.down_since is None:
                self.down_since = now
            self._last_try = now
            self._failures_since_log += 1
            if self._last_log is not None and now - self._last_log < LOG_EVERY_S:
                return
            self._last_log, failures = now, self._failures_since_log
            self._failures_since_log = 0
        logger.error(
            "%s is unreachable (%s: %s) while %s; carrying on without it (%d failure(s) since the last report)",
            self.name,
            type(error).__name__,
            error,
            doing,
            failures,
        )

    def answered(self) -> None:
        if self.down_since is None:  # the usual case, without taking the lock
            return
        with self._lock:
            if self.down_since is None:
                return
            lasted = clock() - self.down_since
            self.down_since, self._last_log, self._failures_since_log = None, None, 0
        logger.warning("%s answers again after %.0f s", self.name, lasted)
        for callback in self._on_recovery:
            callback()


redis_outage = Outage("Redis")
PROBE_KEY = "felab:probe"


@functools.lru_cache(maxsize=4)
def redis_client(url: str) -> redis.Redis:
    """A client of its own for what is not Django's cache (rate limits, the readiness check).

    Short timeouts, as the cache's: a Redis that stops answering must cost a request a
    fraction of a second before the site carries on without it.
    """
    return redis.Redis.from_url(url, socket_connect_timeout=0.25, socket_timeout=0.25)


def _answering(value: bool | None) -> Callable[..., bool | None]:
    return lambda *args, **kwargs: value


def _resilient(name: str, doing: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
    """RedisCache's method ``name``, which answers ``fallback(*its arguments)`` while Redis does not."""
    method = getattr(RedisCache, name)

    @functools.wraps(method)
    def attempt(cache: ResilientRedisCache, *args: Any, **kwargs: Any) -> Any:
        return cache._attempt(
            doing, lambda: method(cache, *args, **kwargs), lambda: fallback(*args, **kwargs)
        )

    return attempt


class ResilientRedisCache(RedisCache):
    """Django's RedisCache, which reads a failure as a miss and drops a write it cannot make."""

    outage = redis_outage

    def _attempt(self, doing: str, operation: Callable[[], Any], fallback: Callable[[], Any]) -> Any:
        if not self.outage.should_try():
            return fallback()
        try:
            if self.outage.down_since is not None:
                # Coming back: a probe first, so the recovery callbacks (a new content version,
                # dropping sessions that went stale meanwhile) run before this operation reads
                # anything Redis kept from before the outage.
                RedisCache.has_key(self, PROBE_KEY)
                self.outage.answered()
            result = operation()
        except RedisError as error:
            self.outage.failed(error, doing)
            return fallback()
        self.outage.answered()
        return result

    add = _resilient("add", "adding to the cache", _answering(False))
    get = _resilient("get", "reading the cache", lambda key, default=None, version=None: default)
    get_many = _resilient("get_many", "reading the cache", lambda *args, **kwargs: {})
    has_key = _resilient("has_key", "reading the cache", _answering(False))
    set = _resilient("set", "writing the cache", _answering(None))
    # set_many answers the keys it could not set: all of them.
    set_many = _resilient("set_many", "writing the cache", lambda data, *args, **kwargs: list(data))
    touch = _resilient("touch", "touching the cache", _answering(False))
    delete = _resilient("delete", "deleting from the cache", _answering(False))
    delete_many = _resilient("delete_many", "deleting from the cache", _answering(None))
    clear = _resilient("clear", "clearing the cache", _answering(False))


def forget_cached_sessions() -> None:
    """Drop every session kept in Redis, once it answers again after an outage.

    Sessions ended or changed meanwhile (a log out, a log in's new key) reached only the
    database; Redis still holds them as they were, and ``cached_db`` reads Redis first, so a
    session ended during the outage would come back. The database has every session: reading
    them from it again costs one query per session, once.
    """
    if not settings.REDIS_URL or not issubclass(
        import_module(settings.SESSION_ENGINE).SessionStore, cached_db.SessionStore
    ):
        return
    pattern = caches[settings.SESSION_CACHE_ALIAS].make_key(SESSION_KEY_PREFIX + "*")
    client = redis_client(settings.REDIS_URL)
    try:
        keys = list(client.scan_iter(match=pattern, count=1000))
        for start in range(0, len(keys), 1000):
            client.unlink(*keys[start : start + 1000])
    except RedisError as error:
        redis_outage.failed(error, "dropping the sessions it kept from before the outage")


redis_outage.on_recovery(forget_cached_sessions)

"""A fixed-window rate limit per client address, kept in Django's cache.

With REDIS_URL set the count lives in Redis: one atomic count for every host behind the proxy.
Without it, production counts in a file cache shared by the workers of one host (made atomic
with a file lock, since the file cache's incr is a read then a write), and development and
tests count in memory. See docs/deploy.md.
"""

from __future__ import annotations

import fcntl
import functools
import ipaddress
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse, JsonResponse

View = Callable[..., HttpResponse]
# The windows' clock; the tests move it across a minute boundary.
clock: Callable[[], float] = time.time
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(proxy, strict=False) for proxy in proxies)


def _is_trusted_proxy(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(request: HttpRequest) -> str:
    """The address of the client, as far as the configured proxies vouch for it.

    A request from a trusted proxy names its client as the last X-Forwarded-For entry that
    proxy appended; entries further left were sent by the client and could be anything, so
    the walk from the right stops at the first address that is not one of our proxies.
    """
    remote = request.META.get("REMOTE_ADDR") or "unknown"
    networks = _networks(tuple(settings.TRUSTED_PROXIES))
    if not networks or not _is_trusted_proxy(remote, networks):
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for address in reversed([part for part in forwarded if part]):
        if not _is_trusted_proxy(address, networks):
            return address if _parses(address) else remote
    return remote


def _parses(address: str) -> bool:
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return False
    return True


@contextmanager
def _one_process_at_a_time(cache: BaseCache) -> Iterator[None]:
    """Serialise add-then-incr on a file cache, whose incr is not atomic across processes."""
    if not isinstance(cache, FileBasedCache):
        yield
        return
    lock_path = Path(cache._dir) / "ratelimit.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def count_request(key: str, window: int) -> tuple[int, float]:
    """Add one to the key's count; return it and the seconds left in its window.

    A window opens at an address's first request and lasts `window` seconds, rather than
    following the clock's minutes: a burst that straddles a minute boundary would otherwise
    get the limit twice (16 of 120 wrong passwords passed a limit of 10 that way). The count
    is atomic for every process sharing the cache.
    """
    cache = caches["default"]  # the backend itself: django.core.cache.cache is a proxy to it
    if isinstance(cache, RedisCache):
        # SET NX EX, INCR and PTTL in one MULTI: the window opens exactly once, and no request
        # slips between a check and an increment, whichever host it reaches.
        client = cache._cache.get_client(write=True)
        redis_key = cache.make_and_validate_key(key)
        with client.pipeline(transaction=True) as pipe:
            pipe.set(redis_key, 0, ex=window, nx=True)
            pipe.incr(redis_key)
            pipe.pttl(redis_key)
            _, count, left_ms = pipe.execute()
        return int(count), max(0, left_ms) / 1000
    now = clock()
    with _one_process_at_a_time(cache):
        cache.add(f"{key}:opened", now, timeout=window)
        cache.add(key, 0, timeout=window)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr: this request opens a new window
            cache.set(key, 1, timeout=window)
            count = 1
        opened = cache.get(f"{key}:opened", now)
    return count, max(0.0, opened + window - now)


def _too_many(request: HttpRequest, scope: str, limit: int, window: int, retry_after: int) -> HttpResponse:
    message = f"Too many requests: at most {limit} per {window} s for {scope}. Try again in {retry_after} s."
    if request.path.endswith(".json") or "application/json" in request.headers.get("Accept", ""):
        response: HttpResponse = JsonResponse({"error": {"param": None, "message": message}}, status=429)
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry_after)
    return response


def rate_limited(scope: str, methods: tuple[str, ...] = ("GET", "POST")) -> Callable[[View], View]:
    """Limit a view to settings.RATE_LIMITS[scope] = (requests, window seconds) per address."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            limit, window = settings.RATE_LIMITS[scope]
            if request.method not in methods or limit <= 0:
                return view(request, *args, **kwargs)
            count, seconds_left = count_request(f"ratelimit:{scope}:{client_address(request)}", window)
            if count > limit:
                return _too_many(request, scope, limit, window, max(1, math.ceil(seconds_left)))
            return view(request, *args, **kwargs)

        return wrapper

    return decorate

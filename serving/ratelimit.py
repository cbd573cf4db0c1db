"""Fixed-window rate limits: per client address here, per account tried in accounts/password_attempts.py.

With REDIS_URL set the count lives in Redis (one atomic script through redis-py's public API).
Without REDIS_URL, and while Redis is unreachable, it lives in the database (RateLimitCount, one
atomic statement). Either way every host behind the proxy shares one count. See docs/deploy.md,
"Rate limits".
"""

from __future__ import annotations

import functools
import ipaddress
import math
import time
from collections.abc import Callable, Sequence

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from redis.exceptions import RedisError

from .cache_outage import redis_client, redis_outage
from .models import RateLimitCount

View = Callable[..., HttpResponse]
# The windows' clock; the tests move it across a minute boundary.
clock: Callable[[], float] = time.time
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(proxy, strict=False) for proxy in proxies)


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None


def _is_trusted_proxy(address: str, networks: tuple[Network, ...]) -> bool:
    ip = _ip(address)
    return ip is not None and any(ip in network for network in networks)


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
            return address if _ip(address) is not None else remote
    return remote


# KEYS: every count one request makes; ARGV: now, window by the caller's clock. Returns each
# key's count and when its window opened, in turn. A key's own expiry only frees memory.
_COUNT_SCRIPT = """
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local counted = {}
for _, key in ipairs(KEYS) do
    local opened = redis.call('HGET', key, 'opened')
    if not opened or now >= tonumber(opened) + window then
        redis.call('HSET', key, 'opened', ARGV[1], 'count', 1)
        redis.call('EXPIRE', key, math.ceil(window))
        table.insert(counted, 1)
        table.insert(counted, ARGV[1])
    else
        table.insert(counted, redis.call('HINCRBY', key, 'count', 1))
        table.insert(counted, opened)
    end
end
return counted
"""


def _count_in_redis(url: str, keys: Sequence[str], window: float, now: float) -> list[tuple[int, float]]:
    """One atomic count for every host: the script runs as one step on the Redis server."""
    prefix = settings.RATE_LIMIT_KEY_PREFIX
    flat = redis_client(url).eval(
        _COUNT_SCRIPT, len(keys), *(f"{prefix}:{key}" for key in keys), repr(now), window
    )
    return [(int(count), float(opened)) for count, opened in zip(flat[::2], flat[1::2], strict=True)]


# One statement, so it is atomic on SQLite (>= 3.35) and PostgreSQL alike: the first count of a
# key inserts its row; a later one adds 1 inside the window, or opens a new one once it has
# ended (SET reads the row as it was before the update). PostgreSQL locks a request's rows in
# the order given until the statement ends, so a request counting the same keys after it sees
# all of its counts.
_COUNT_SQL = """
INSERT INTO {table} ("key", opened, ends, "count") VALUES {rows}
ON CONFLICT ("key") DO UPDATE SET
    "count" = CASE WHEN {table}.ends <= excluded.opened THEN 1 ELSE {table}."count" + 1 END,
    opened = CASE WHEN {table}.ends <= excluded.opened THEN excluded.opened ELSE {table}.opened END,
    ends = CASE WHEN {table}.ends <= excluded.opened THEN excluded.ends ELSE {table}.ends END
RETURNING "key", "count", opened
"""
# Rows of windows that ended are deleted at most this often per process.
PRUNE_EVERY_S = 60.0
_last_prune = -math.inf


def _count_in_database(keys: Sequence[str], window: float, now: float) -> list[tuple[int, float]]:
    """One count for every host and worker that shares the database."""
    global _last_prune
    if now - _last_prune >= PRUNE_EVERY_S or now < _last_prune:
        _last_prune = now
        RateLimitCount.objects.filter(ends__lte=now).delete()
    with connection.cursor() as cursor:
        rows = ", ".join(["(%s, %s, %s, 1)"] * len(keys))
        cursor.execute(
            _COUNT_SQL.format(table=RateLimitCount._meta.db_table, rows=rows),
            [value for key in keys for value in (key, now, now + window)],
        )
        # RETURNING promises no order: match the rows to the keys by name.
        counted = {key: (int(count), float(opened)) for key, count, opened in cursor.fetchall()}
    return [counted[key] for key in keys]


def count_requests(keys: Sequence[str], window: int) -> list[tuple[int, float]]:
    """Add one to each key's count, in one atomic step; return each count and the seconds left
    in its window, in the keys' order.

    A window opens at a key's first request and lasts exactly `window` seconds: windows that
    followed the clock's minutes let a burst across a boundary have the limit twice (16 of 120
    wrong passwords passed a limit of 10), and a window renewed by each request never ended
    while requests kept coming. A request's keys are counted together because it is refused
    when any is over the limit: counted one by one, two requests could each make one of the
    other's counts first, and both be refused where one was within the limit.
    """
    keys = list(dict.fromkeys(keys))  # a key twice in one statement is an error on PostgreSQL
    now = clock()
    counted: list[tuple[int, float]] | None = None
    if settings.REDIS_URL and redis_outage.should_try():
        try:
            counted = _count_in_redis(settings.REDIS_URL, keys, window, now)
        except RedisError as error:
            redis_outage.failed(error, "counting a rate limit (counting in the database meanwhile)")
        else:
            redis_outage.answered()
    if counted is None:
        counted = _count_in_database(keys, window, now)
    # Clamped: another host whose clock runs ahead may have opened the window "in the future".
    return [(count, min(float(window), max(0.0, opened + window - now))) for count, opened in counted]


# An IPv6 subscriber is handed at least a /64 and picks any address in it at will, so a count
# per IPv6 address would be a count per request: a /64 is counted as one address.
IPV6_COUNTED_PREFIX = 64


def counted_address(address: str) -> str:
    """The address a limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 one too), an
    IPv6 address as its /64."""
    ip = _ip(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, IPV6_COUNTED_PREFIX), strict=False))
    return address


def address_key(scope: str, request: HttpRequest) -> str:
    """The count of one scope's requests from this client address (sign-up and the password
    forms share the "login" one)."""
    return f"ratelimit:{scope}:{counted_address(client_address(request))}"


def refusal(
    request: HttpRequest, keys: Sequence[str], limit: int | Sequence[int], window: int, what: str
) -> HttpResponse | None:
    """Count this request under each of ``keys`` (count_requests); a 429 naming ``what`` if any
    count is over its limit (``limit``, or one limit per key in turn), else None."""
    limits = [limit] * len(keys) if isinstance(limit, int) else list(limit)
    counted = count_requests(keys, window)
    over = [
        (key_limit, seconds_left)
        for (count, seconds_left), key_limit in zip(counted, limits, strict=True)
        if key_limit > 0 and count > key_limit
    ]
    if not over:
        return None
    retry_after = max(1, math.ceil(max(seconds_left for _, seconds_left in over)))
    lowest = min(key_limit for key_limit, _ in over)
    message = f"Too many requests: at most {lowest} per {window} s for {what}. Try again in {retry_after} s."
    if request.path.endswith(".json") or "application/json" in request.headers.get("Accept", ""):
        response: HttpResponse = JsonResponse({"error": {"param": None, "message": message}}, status=429)
    elif request.headers.get("HX-Request") == "true":
        # Shown in place by static/js/htmx-errors.js, which prints a plain text answer's words.
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    else:
        response = render(request, "429.html", {"message": message}, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def rate_limited(scope: str, methods: tuple[str, ...] = ("GET", "POST")) -> Callable[[View], View]:
    """Limit a view to settings.RATE_LIMITS[scope] = (requests, window seconds) per address."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            limit, window = settings.RATE_LIMITS[scope]
            if request.method in methods and limit > 0:
                refused = refusal(request, [address_key(scope, request)], limit, window, scope)
                if refused is not None:
                    return refused
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


def rate_limited_per_address_and_visitor(
    address_scope: str, visitor_scope: str, visitor: Callable[[HttpRequest], str], what: str
) -> Callable[[View], View]:
    """Limit a view's POSTs per client address (settings.RATE_LIMITS[address_scope]) and per
    visitor (RATE_LIMITS[visitor_scope], counted under ``visitor(request)``; "" for a visitor
    nothing names yet, who is counted by address alone). Both counts share one window length
    (the address scope's) and are counted in one step."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST":
                address_limit, window = settings.RATE_LIMITS[address_scope]
                visitor_limit, _ = settings.RATE_LIMITS[visitor_scope]
                keys, limits = [], []
                if address_limit > 0:
                    keys.append(address_key(address_scope, request))
                    limits.append(address_limit)
                if visitor_limit > 0 and (who := visitor(request)):
                    keys.append(f"ratelimit:{visitor_scope}:{who}")
                    limits.append(visitor_limit)
                if keys:
                    refused = refusal(request, keys, limits, window, what)
                    if refused is not None:
                        return refused
            return view(request, *args, **kwargs)

        return wrapper

    return decorate

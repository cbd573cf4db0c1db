import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from redis.exceptions import RedisError

from .cache_outage import redis_client

Check = Callable[[], dict[str, Any]]
# What the apps report besides this host's own dependencies, by name (felab_sim: its task
# queue; accounts: mail).
_REPORTED: dict[str, Check] = {}


def report_readiness(name: str, check: Check) -> None:
    """Have /readyz report ``check()`` (its ``ok``, and what else it says) under ``name``; a
    failure there makes the host `degraded`, never not ready. Named from an AppConfig.ready."""
    _REPORTED[name] = check


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers, and the trivial view that benchmarks compare pages with."""
    return HttpResponse("ok", content_type="text/plain")


def _timed(check: Check) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        result = check()
    except DatabaseError as error:
        result = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return {**result, "ms": round((time.perf_counter() - started) * 1000, 1)}


def _database() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True}


def _cache() -> dict[str, Any]:
    if settings.REDIS_URL:
        try:
            redis_client(settings.REDIS_URL).ping()
        except RedisError as error:
            return {
                "ok": False,
                "backend": "redis",
                "error": f"{type(error).__name__}: {error}",
                "meanwhile": "pages, sessions and rate limits from the database",
            }
        return {"ok": True, "backend": "redis"}
    probe = f"felab:readyz:{time.monotonic_ns()}"
    cache.set(probe, 1, timeout=10)
    answered = cache.get(probe) == 1
    cache.delete(probe)
    return {"ok": answered, "backend": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]}


@require_GET
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness for load balancers: each dependency's state, and 503 only when this host cannot
    serve pages (its database is unreachable). The cache and what the apps report
    (report_readiness: the task queue, mail) do not take the host out: every host shares them, so a
    proxy dropping hosts for them would take the whole site down, while the site carries on
    without them (docs/deploy.md)."""
    checks = {
        "database": _timed(_database),
        "cache": _timed(_cache),
        **{name: _timed(check) for name, check in _REPORTED.items()},
    }
    ready = checks["database"]["ok"]
    degraded = [name for name, check in checks.items() if not check["ok"]]
    status = "ready" if not degraded else ("degraded" if ready else "not ready")
    return JsonResponse({"status": status, "checks": checks}, status=200 if ready else 503)

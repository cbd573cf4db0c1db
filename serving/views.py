import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_tasks_db.models import DBTaskResult
from redis.exceptions import RedisError

from .cache_outage import redis_client
from .mail import last_send

# A task waiting this long while none runs means no worker is taking tasks.
QUEUE_STALLED_AFTER = timedelta(minutes=10)


@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers, and the trivial view that benchmarks compare pages with."""
    return HttpResponse("ok", content_type="text/plain")


def _timed(check: Callable[[], dict[str, Any]]) -> dict[str, Any]:
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


def _queue() -> dict[str, Any]:
    waiting = DBTaskResult.objects.ready()
    oldest = waiting.order_by("enqueued_at").values_list("enqueued_at", flat=True).first()
    running = DBTaskResult.objects.running().exists()
    waited = (timezone.now() - oldest) if oldest else timedelta(0)
    stalled = not running and waited > QUEUE_STALLED_AFTER
    return {
        "ok": not stalled,
        "waiting": waiting.count(),
        "running": running,
        "oldest_wait_s": round(waited.total_seconds()),
        **({"error": "tasks wait and none runs: is a worker (make worker) up?"} if stalled else {}),
    }


def _mail() -> dict[str, Any]:
    """How the site's last mail send went, on whichever host (serving/mail.py); none yet is ok."""
    last = last_send()
    if last is None:
        return {"ok": True, "last_send": None}
    return {
        "ok": last.ok,
        "last_send": last.at.isoformat(),
        **({} if last.ok else {"error": f"the last send failed: {last.error}"}),
    }


@require_GET
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness for load balancers: each dependency's state, and 503 only when this host cannot
    serve pages (its database is unreachable). The cache, the task queue and mail (whether the
    last send failed) are reported but do not take the host out: every host shares them, so a
    proxy dropping hosts for them would take the whole site down, while the site carries on
    without them (docs/deploy.md)."""
    checks = {
        "database": _timed(_database),
        "cache": _timed(_cache),
        "queue": _timed(_queue),
        "mail": _timed(_mail),
    }
    ready = checks["database"]["ok"]
    degraded = [name for name, check in checks.items() if not check["ok"]]
    status = "ready" if not degraded else ("degraded" if ready else "not ready")
    return JsonResponse({"status": status, "checks": checks}, status=200 if ready else 503)

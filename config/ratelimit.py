"""A fixed-window rate limit per client address, kept in Django's cache.

Production uses a file-based cache, so every gunicorn worker on the machine counts into the
same windows; tests and development use the in-memory cache.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse

View = Callable[..., HttpResponse]


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


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
            now = time.time()
            window_index = int(now // window)
            key = f"ratelimit:{scope}:{client_address(request)}:{window_index}"
            cache.add(key, 0, timeout=window + 1)
            try:
                count = cache.incr(key)
            except ValueError:  # expired between add and incr: this request opens a new window
                cache.set(key, 1, timeout=window + 1)
                count = 1
            if count > limit:
                retry_after = max(1, math.ceil((window_index + 1) * window - now))
                return _too_many(request, scope, limit, window, retry_after)
            return view(request, *args, **kwargs)

        return wrapper

    return decorate

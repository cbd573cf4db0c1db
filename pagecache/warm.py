"""The course's pages built once in gunicorn's master process, before it forks its workers.

What pages keep per content version (pagecache/content_cache.py) lives in each process's memory,
so without this every new worker builds every page again on its first visits, and under load
those first visitors wait. Built in the master (``preload_app``), the pages reach each worker
by fork, those gunicorn starts in place of one past ``max_requests`` too; a content edit later
draws a new version and the workers rebuild as before.

Each app names its pages with :func:`warm_paths` (from its AppConfig.ready). Each page is
requested through Django's own WSGI handler as a first-time visitor, so what is kept is exactly
what a visitor's request would keep, and nobody's data is in it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from wsgiref.util import setup_testing_defaults

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.db import connections

logger = logging.getLogger("felab.warm")


# Functions that each yield some of the pages to build, as the apps registered them.
_PATHS: list[Callable[[], Iterable[str]]] = []


def warm_paths(paths: Callable[[], Iterable[str]]) -> None:
    """Have ``paths()``'s pages built before the workers fork."""
    if paths not in _PATHS:
        _PATHS.append(paths)


def course_paths() -> Iterator[str]:
    """Every page the apps registered, in the order they registered them."""
    for paths in _PATHS:
        yield from paths()


def _served_host() -> str:
    """A host name ALLOWED_HOSTS accepts ("*" and ".example.org" patterns included)."""
    for pattern in settings.ALLOWED_HOSTS:
        host = pattern.lstrip(".")
        if host and host != "*":
            return host
    return "localhost"


def wsgi_get(handler: WSGIHandler, path_and_query: str, host: str, cookies: str = "") -> str:
    """One GET of the WSGI application as a worker serves it, the body read and the response
    closed; its status line (bench/bench_gc_pauses.py asks with a student's cookies)."""
    path, _, query = path_and_query.partition("?")
    environ = {
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": host,
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "https" if settings.SECURE_SSL_REDIRECT else "http",
        **({"HTTP_COOKIE": cookies} if cookies else {}),
    }
    setup_testing_defaults(environ)  # the rest of a GET's environ
    statuses: list[str] = []
    response = handler(environ, lambda status, headers, exc_info=None: statuses.append(status))
    try:
        for _ in response:
            pass
    finally:
        response.close()
    return statuses[0]


def warm_kept_pages() -> tuple[int, list[str]]:
    """Request every course page once; (pages that answered 200, "path: status" of the others).

    Closes every database connection afterwards: a connection opened here must not be shared
    by the workers forked from this process.
    """
    started = time.perf_counter()
    handler = WSGIHandler()
    host = _served_host()
    served, failed = 0, []
    try:
        for path in course_paths():
            status = wsgi_get(handler, path, host)
            if status.startswith("200"):
                served += 1
            else:
                failed.append(f"{path}: {status}")
    finally:
        connections.close_all()
    logger.info("kept %d pages before forking workers, in %.1f s", served, time.perf_counter() - started)
    if failed:
        logger.warning("pages that did not answer 200 while warming: %s", "; ".join(failed[:10]))
    return served, failed

"""The garbage collector's pauses in a worker, with and without gc.freeze() after the warm-up.

    python bench/bench_gc_pauses.py [--requests 3000] [--only NAME]

gunicorn's arbiter builds the course's pages before it forks (pagecache/warm.py), and each worker
inherits them. A full collection in a worker walks every object the process holds, the
inherited ones too, so it pauses whichever request triggered it. config/gunicorn.conf.py's
pre_fork freezes them out of the collector's reach. In-process, as bench/bench_signed_in.py
sets up (production settings without Redis, SQLite, the studying student), but each GET page
asked of Django's WSGI handler as gunicorn asks it, with the student's cookies (the test client
leaves objects behind on every request, which would grow the heap as no worker's does): the
warm-up as the arbiter runs it, then --requests of each page unfrozen, then the same after
gc.freeze(); per page the median, p99 and slowest request, and the full collections that ran.
Last, how long one full collection takes in each state. The slowest request and the
collections' count, not the median, are what freezing changes.
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command

from bench.bench_signed_in import PAGES, studying_student  # its environment, and django.setup()
from pagecache.warm import warm_kept_pages, wsgi_get

full_collections: list[float] = []


def _count_full_collections(phase: str, info: dict) -> None:
    if phase == "start" and info["generation"] == 2:
        full_collections.append(time.perf_counter())


def get_page(handler: WSGIHandler, path_and_query: str, cookies: str) -> None:
    status = wsgi_get(handler, path_and_query, "testserver", cookies)
    if not status.startswith("200"):
        raise SystemExit(f"{path_and_query}: {status}")


def measure(request, count: int) -> tuple[float, float, float, int]:
    """Median, p99 and slowest request in ms, and the full collections during them."""
    for _ in range(50):
        request()
    full_collections.clear()
    times = []
    for _ in range(count):
        started = time.perf_counter()
        request()
        times.append(time.perf_counter() - started)
    times.sort()
    return (
        times[len(times) // 2] * 1000,
        times[int(len(times) * 0.99)] * 1000,
        times[-1] * 1000,
        len(full_collections),
    )


def one_full_collection_ms() -> float:
    started = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--only", default="", help="measure only the pages whose name contains this")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0)
    settings.STATIC_ROOT = tempfile.mkdtemp(prefix="felab-bench-static-")
    call_command("collectstatic", interactive=False, verbosity=0)
    served, failed = warm_kept_pages()
    if failed:
        raise SystemExit(f"the warm-up failed: {failed[:3]}")
    student = studying_student()
    cookies = "; ".join(f"{name}={morsel.value}" for name, morsel in student.cookies.items())
    handler = WSGIHandler()
    pages = [page for page in PAGES if page.form is None and args.only.casefold() in page.name.casefold()]
    gc.callbacks.append(_count_full_collections)
    results = {}
    for frozen in (False, True):
        if frozen:
            gc.freeze()
        for page in pages:
            request = functools.partial(get_page, handler, page.path, cookies if page.signed_in else "")
            results[page.name, frozen] = measure(request, args.requests)
        results["collection", frozen] = one_full_collection_ms()
        results["objects", frozen] = len(gc.get_objects())
    print(f"in-process, {served} pages warmed; {args.requests} requests a page; ms")
    print(
        f"{'page':40s} {'unfrozen: p50':>13s} {'p99':>6s} {'max':>6s} {'full':>4s}   {'frozen: p50':>11s} {'p99':>6s} {'max':>6s} {'full':>4s}"
    )
    for page in pages:
        cells = []
        for frozen in (False, True):
            p50, p99, slowest, collections = results[page.name, frozen]
            cells.append(f"{p50:6.2f} {p99:6.2f} {slowest:6.1f} {collections:4d}")
        print(f"{page.name:40s} {cells[0]:>31s}   {cells[1]:>29s}")
    for frozen in (False, True):
        state = "frozen" if frozen else "unfrozen"
        print(
            f"one full collection, {state}: {results['collection', frozen]:.1f} ms over "
            f"{results['objects', frozen]:,} objects"
            + (f" ({gc.get_freeze_count():,} frozen)" if frozen else "")
        )


if __name__ == "__main__":
    main()

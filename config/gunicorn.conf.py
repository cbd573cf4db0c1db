"""gunicorn settings for `make serve`: workers from the machine's core count."""

import gc
import multiprocessing
import os

bind = os.environ.get("FELAB_BIND", "127.0.0.1:8000")
# Sync workers spend most of a request waiting on the database: two per core plus one.
workers = int(os.environ.get("FELAB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = "sync"
timeout = 30
graceful_timeout = 20
# Django is imported once, in the arbiter, and each worker is forked from it: a worker that is
# replaced (max_requests, or one killed) serves again in milliseconds instead of spending about a
# second of CPU importing Django while the others carry its load. Nothing opens a database
# connection at import; the warm-up below closes the ones it opens, so none is shared across the
# fork.
preload_app = True
# Replaced now and then, in case anything grows; a replacement starts with the pages the arbiter
# kept at start (when_ready), rebuilt on first use if the content changed since.
max_requests = 20000
max_requests_jitter = 2000
accesslog = os.environ.get("FELAB_ACCESS_LOG", "-")
errorlog = "-"
wsgi_app = "config.wsgi:application"


def when_ready(server) -> None:
    """Before the first worker forks: the course's pages built once, so that no worker's first
    visitors wait for them (pagecache/warm.py). A failure is logged and the site starts anyway."""
    try:
        from pagecache.warm import warm_kept_pages

        served, failed = warm_kept_pages()
        server.log.info("kept %d course pages for the workers (%d failed)", served, len(failed))
    except Exception as error:  # a fresh database not yet migrated, say
        server.log.warning("course pages not kept before forking workers: %r", error)


def pre_fork(server, worker) -> None:
    """Everything the arbiter holds (Django, the pages kept above) is moved out of the garbage
    collector's reach before each fork. It lives as long as the worker, yet each full collection
    in a worker walked all of it, about 195,000 objects: the request that set one off waited
    about 90 ms (bench/bench_gc_pauses.py; 0.2 ms frozen), and each walk wrote to memory pages
    the fork had shared with the arbiter. Objects are still freed when nothing refers to them;
    only cycles among these are never collected, and a worker is replaced after max_requests."""
    gc.freeze()

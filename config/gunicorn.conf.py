"""gunicorn settings for `make serve`: workers from the machine's core count."""

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
# connection at import, so no connection is shared across the fork.
preload_app = True
# Replaced now and then, in case anything grows; each replacement starts with empty page caches
# (serving/content_cache.py), so not too often.
max_requests = 20000
max_requests_jitter = 2000
accesslog = os.environ.get("FELAB_ACCESS_LOG", "-")
errorlog = "-"
wsgi_app = "config.wsgi:application"

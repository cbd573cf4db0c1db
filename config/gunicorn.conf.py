"""gunicorn settings for `make serve`: workers from the machine's core count."""

import multiprocessing
import os

bind = os.environ.get("FELAB_BIND", "127.0.0.1:8000")
# Sync workers spend most of a request waiting on the database: two per core plus one.
workers = int(os.environ.get("FELAB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = "sync"
timeout = 30
graceful_timeout = 20
max_requests = 5000
max_requests_jitter = 500
accesslog = os.environ.get("FELAB_ACCESS_LOG", "-")
errorlog = "-"
wsgi_app = "config.wsgi:application"

"""Start felab under gunicorn with production settings, for benchmarks and load tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.static_root import collected_static

ROOT = Path(__file__).resolve().parent.parent.parent
PY = sys.executable
POSTGRES_ADMIN_URL = os.environ.get("PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scratch_database(engine: str, name: str = "felab_bench") -> str:
    """A fresh, empty database: a new SQLite file, or a PostgreSQL database dropped and made anew."""
    if engine == "sqlite":
        return f"sqlite:///{Path(tempfile.mkdtemp(prefix='felab-')) / 'site.sqlite3'}"
    import psycopg

    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def production_env(database_url: str, port: int, workers: int | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_ENV": "production",
        "DJANGO_INSECURE_HTTP": "1",
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "FELAB_BIND": f"127.0.0.1:{port}",
        "FELAB_ACCESS_LOG": os.devnull,
        "FELAB_CACHE_DIR": tempfile.mkdtemp(prefix="felab-cache-"),
        # Benchmarks measure the pages, not the rate limiter.
        "FELAB_SWEEP_LIMIT": "0",
        "FELAB_LOGIN_LIMIT": "0",
        "FELAB_WRITE_LIMIT": "0",
        "FELAB_LEARNER_WRITE_LIMIT": "0",
    }
    env.pop("DJANGO_DEBUG", None)
    if workers:
        env["FELAB_WORKERS"] = str(workers)
    return env


@dataclass
class Site:
    url: str
    env: dict[str, str]
    process: subprocess.Popen

    def worker_pids(self) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        return [int(pid) for pid in out.split()]


@contextmanager
def running_site(
    database_url: str,
    workers: int | None = None,
    extra_env: dict[str, str] | None = None,
    release: bool = True,
) -> Iterator[Site]:
    port = free_port()
    env = {
        **production_env(database_url, port, workers),
        "FELAB_STATIC_ROOT": str(collected_static()),
        **(extra_env or {}),
    }
    # The release step (make release) for a database no host has released yet.
    for command in (["migrate", "--noinput"], ["import_lessons"]) if release else ():
        subprocess.run(
            [PY, "manage.py", *command, "-v", "0"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
        )
    gunicorn = str(Path(PY).with_name("gunicorn"))
    process = subprocess.Popen(
        [gunicorn, "--config", "config/gunicorn.conf.py"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )
    site = Site(f"http://127.0.0.1:{port}", env, process)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{site.url}/healthz", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.2)
        yield site
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)

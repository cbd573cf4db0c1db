"""The settings module's promises: production refuses to start half-configured, SQLite is
set up for concurrent writers, and every page carries the security headers."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    # The browser tests' DJANGO_ALLOW_ASYNC_UNSAFE is theirs alone: a deployment never has it.
    unset = {"SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ENV", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({}, "SECRET_KEY and ALLOWED_HOSTS"),
        ({"SECRET_KEY": "k" * 60}, "ALLOWED_HOSTS"),
        ({"ALLOWED_HOSTS": "felab.example.org"}, "SECRET_KEY"),
    ],
)
def test_production_refuses_to_start_without_secret_key_and_allowed_hosts(env, missing):
    process = manage("check", DJANGO_ENV="production", **env)
    assert process.returncode != 0
    assert f"needs {missing}" in process.stderr


def test_production_with_both_passes_the_deploy_check():
    process = manage(
        "check", "--deploy", "--fail-level", "WARNING",
        DJANGO_ENV="production", SECRET_KEY="s" * 30 + "-a-long-random-looking-value-0123456789", ALLOWED_HOSTS="felab.example.org",
    )  # fmt: skip
    assert process.returncode == 0, process.stderr


def test_sqlite_waits_for_the_write_lock_instead_of_failing(tmp_path):
    options = settings.DATABASES["default"].get("OPTIONS", {})
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("the suite runs on PostgreSQL")
    assert options["transaction_mode"] == "IMMEDIATE"
    # The init command really puts a database file in WAL mode with a busy timeout.
    conn = sqlite3.connect(tmp_path / "db.sqlite3")
    conn.executescript(options["init_command"])
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


@pytest.mark.django_db
def test_pages_carry_the_security_headers(client):
    response = client.get("/")
    csp = response["Content-Security-Policy"]
    assert (
        "script-src 'self'" in csp
        and "unsafe-eval" not in csp
        and "'unsafe-inline'" not in csp.split("style-src")[0]
    )
    assert "frame-ancestors 'none'" in csp
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_a_heavy_simulation_waits_only_briefly_for_a_permit():
    # A sync worker waiting for a simulation permit is one no other page can have: with a 2 s
    # wait, five flooding requests held every worker and the home page's p50 went from 3.8 ms
    # to 80.8 ms (bench/bench_flood.py). The flood gets 503s instead.
    result = manage(
        "shell", "--no-imports", "-c", "from django.conf import settings; print(settings.SIM_PERMIT_WAIT_S)"
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.split()[-1]) <= 0.1


def _folders(**env: str) -> list[str]:
    """The simulation permits' folder and the production file cache's, as a process would set them."""
    unset = {"FELAB_SIM_PERMITS_DIR", "FELAB_CACHE_DIR", "DATABASE_URL", "REDIS_URL"}
    kept = {k: v for k, v in os.environ.items() if k not in unset}
    production = {"DJANGO_ENV": "production", "SECRET_KEY": "s" * 50, "ALLOWED_HOSTS": "felab.example.org"}
    process = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c",
         "from django.conf import settings; print('FOLDERS', settings.SIM_PERMITS_DIR, settings.CACHES['default']['LOCATION'])"],
        cwd=ROOT, env={**kept, **production, **env}, capture_output=True, text=True,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    return next(line.split()[1:] for line in process.stdout.splitlines() if line.startswith("FOLDERS "))


def test_each_database_gets_its_own_permit_and_cache_folders_unless_told(tmp_path):
    # Two felabs on one machine must not share their permits or their cache by default.
    one = _folders(DATABASE_URL=f"sqlite:///{tmp_path / 'one.sqlite3'}")
    two = _folders(DATABASE_URL=f"sqlite:///{tmp_path / 'two.sqlite3'}")
    assert len(set(one + two)) == 4
    assert "/tmp/felab-cache" not in one + two
    assert one == _folders(DATABASE_URL=f"sqlite:///{tmp_path / 'one.sqlite3'}")  # stable across restarts
    told = _folders(FELAB_SIM_PERMITS_DIR=str(tmp_path / "s"), FELAB_CACHE_DIR=str(tmp_path / "c"))
    assert told == [str(tmp_path / "s"), str(tmp_path / "c")]


EMAIL_SETTINGS = (
    "from django.conf import settings as s; "
    "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_HOST_USER, s.EMAIL_USE_TLS, s.EMAIL_USE_SSL, "
    "s.DEFAULT_FROM_EMAIL, sep='|')"
)


def test_production_sends_email_through_the_smtp_server_the_environment_names():
    process = manage(
        "shell", "--no-imports", "-c", EMAIL_SETTINGS,
        DJANGO_ENV="production", SECRET_KEY="k" * 60, ALLOWED_HOSTS="felab.example.org",
        EMAIL_HOST="smtp.example.org", EMAIL_PORT="465", EMAIL_HOST_USER="felab", EMAIL_HOST_PASSWORD="pw",
        EMAIL_USE_SSL="1", DEFAULT_FROM_EMAIL="felab <noreply@example.org>",
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip().split("|") == [
        "accounts.mail.SMTPBackend", "smtp.example.org", "465", "felab", "False", "True",
        "felab <noreply@example.org>",
    ]  # fmt: skip


def test_development_prints_email_on_the_console():
    process = manage(
        "shell", "--no-imports", "-c", "from django.conf import settings as s; print(s.EMAIL_BACKEND)"
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "django.core.mail.backends.console.EmailBackend"


def test_with_redis_the_cache_survives_its_outage_and_is_the_only_cache(tmp_path):
    process = manage(
        "shell", "-c",
        "from django.conf import settings; import json; print(json.dumps([settings.CACHES, settings.SESSION_ENGINE, settings.SESSION_CACHE_ALIAS]))",
        DJANGO_ENV="production", SECRET_KEY="s" * 60, ALLOWED_HOSTS="felab.example.org",
        REDIS_URL="redis://cache.internal:6379/0", FELAB_CACHE_DIR=str(tmp_path),
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    caches, session_engine, session_cache = json.loads(process.stdout.strip().splitlines()[-1])
    default = caches["default"]
    assert default["BACKEND"] == "serving.cache_outage.ResilientRedisCache"
    # A stuck Redis costs a request a quarter of a second, not redis-py's default 5 s.
    assert default["OPTIONS"] == {"socket_connect_timeout": 0.25, "socket_timeout": 0.25}
    assert set(caches) == {"default"}  # rate limits fall back to the database, not a host's cache
    assert (session_engine, session_cache) == ("django.contrib.sessions.backends.cached_db", "default")


def test_without_redis_sessions_are_read_from_the_database_on_every_request(tmp_path):
    process = manage(
        "shell", "-c",
        "from django.conf import settings; import json; print(json.dumps([settings.SESSION_ENGINE, settings.CACHES[settings.SESSION_CACHE_ALIAS], settings.MIDDLEWARE]))",
        DJANGO_ENV="production", SECRET_KEY="s" * 60, ALLOWED_HOSTS="felab.example.org",
        REDIS_URL="", FELAB_CACHE_DIR=str(tmp_path),
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    session_engine, session_cache, middleware = json.loads(process.stdout.strip().splitlines()[-1])
    # Not a host's file cache, which another host's log out would not reach.
    assert session_engine == "django.contrib.sessions.backends.cached_db"
    assert session_cache["BACKEND"] == "django.core.cache.backends.dummy.DummyCache"
    assert "django.contrib.auth.middleware.AuthenticationMiddleware" in middleware
    assert "django_htmx.middleware.HtmxMiddleware" in middleware


def test_the_one_host_reads_sessions_from_its_file_cache_and_several_hosts_from_the_database(tmp_path):
    script = (
        "from django.conf import settings; print(settings.CACHES[settings.SESSION_CACHE_ALIAS]['BACKEND'])"
    )
    production = {"DJANGO_ENV": "production", "SECRET_KEY": "s" * 60, "ALLOWED_HOSTS": "felab.example.org"}
    backends = {}
    for one_host in ("1", ""):
        process = manage(
            "shell",
            "-c",
            script,
            **production,
            REDIS_URL="",
            FELAB_ONE_HOST=one_host,
            FELAB_CACHE_DIR=str(tmp_path),
        )
        assert process.returncode == 0, process.stderr
        backends[one_host] = process.stdout.strip().splitlines()[-1]
    assert backends == {
        "1": "django.core.cache.backends.filebased.FileBasedCache",
        "": "django.core.cache.backends.dummy.DummyCache",
    }

"""The rate limit's count is atomic across processes, in Redis and in the database (a cache's
plain add-then-incr counted 249 of 1,000)."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.test import RequestFactory

from serving.ratelimit import client_address
from tests.limits import SteppedClock

ROOT = Path(__file__).resolve().parent.parent.parent
REDIS_URL = os.environ.get("FELAB_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

COUNT_IN_A_PROCESS = """
import django, sys
django.setup()
from serving.ratelimit import count_requests
key, n = sys.argv[1], int(sys.argv[2])
last = 0
for _ in range(n):
    last = max(last, count_requests([key], 60)[0][0])
print(last)
"""


def count_from_processes(env: dict[str, str], processes: int = 4, each: int = 250) -> int:
    key = f"test-count-{uuid.uuid4().hex}"
    clean = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DJANGO_ENV"}}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", COUNT_IN_A_PROCESS, key, str(each)],
            cwd=ROOT,
            env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    highest = [int(child.communicate(timeout=120)[0]) for child in children]
    assert all(child.returncode == 0 for child in children)
    return max(highest)


def test_redis_counts_every_request_from_four_processes():
    assert count_from_processes({"REDIS_URL": REDIS_URL}) == 1000


def test_the_database_counts_every_request_from_four_processes(tmp_path):
    production = {
        "DJANGO_ENV": "production",
        "SECRET_KEY": "test-" + "k" * 50,
        "ALLOWED_HOSTS": "testserver",
        "FELAB_CACHE_DIR": str(tmp_path / "cache"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    clean = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DJANGO_ENV"}}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "serving", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **production},
        check=True,
    )
    assert count_from_processes(production) == 1000


@pytest.mark.parametrize(
    ("remote", "forwarded", "proxies", "expected"),
    [
        # No proxy configured: the header is the client's own word, and ignored.
        ("203.0.113.9", "198.51.100.1", [], "203.0.113.9"),
        # From the proxy: the address it appended, not what the client claimed before it.
        ("127.0.0.1", "6.6.6.6, 198.51.100.7", ["127.0.0.1"], "198.51.100.7"),
        ("10.0.0.2", "198.51.100.7, 10.0.0.3", ["10.0.0.0/8"], "198.51.100.7"),
        # A client that is not the proxy cannot pose as one.
        ("203.0.113.9", "198.51.100.1", ["127.0.0.1"], "203.0.113.9"),
        # A proxy that sent nothing usable: its own address.
        ("127.0.0.1", "", ["127.0.0.1"], "127.0.0.1"),
        ("127.0.0.1", "not-an-address", ["127.0.0.1"], "127.0.0.1"),
    ],
)
def test_the_client_address_comes_from_the_header_only_through_a_trusted_proxy(
    settings, remote, forwarded, proxies, expected
):
    settings.TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


PROXY_SSL_HEADER = """
import django
django.setup()
from django.conf import settings
print(getattr(settings, "SECURE_PROXY_SSL_HEADER", None))
"""


@pytest.mark.parametrize(
    ("proxies", "header"), [("", "None"), ("127.0.0.1", "('HTTP_X_FORWARDED_PROTO', 'https')")]
)
def test_the_forwarded_scheme_is_trusted_only_when_a_proxy_is_configured(proxies, header):
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_ENV="production",
        SECRET_KEY="test-" + "k" * 50,
        ALLOWED_HOSTS="testserver",
        FELAB_TRUSTED_PROXIES=proxies,
    )
    shown = subprocess.run(
        [sys.executable, "-c", PROXY_SSL_HEADER],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == header


@pytest.mark.django_db
def test_a_burst_across_a_minute_boundary_gets_the_limit_once(client, settings, monkeypatch):
    # A window opens at the address's first attempt, not on the clock's minutes: windows on the
    # minutes would let 10 attempts at 11:59:59.5 and 10 more at 12:00:00.5 all pass.
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (10, 60)}
    clock = SteppedClock(119.5)
    monkeypatch.setattr("serving.ratelimit.clock", clock)
    statuses = []
    for attempt in range(20):
        if attempt == 10:
            clock.advance(1)
        statuses.append(client.post("/accounts/login/", {"username": "x", "password": "y"}).status_code)
    assert statuses.count(429) == 10 and 429 not in statuses[:10]

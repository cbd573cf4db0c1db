"""Shared by the rate-limit and Redis-outage tests: a clock they move, and Redis servers."""

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import redis


class SteppedClock:
    """Stands in for time.time in config.ratelimit (or time.monotonic in config.cache_outage)."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class OwnRedis:
    """A redis-server of the test's own, on a free port, that the test may kill."""

    process: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


@contextmanager
def own_redis() -> Iterator[OwnRedis]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is missing (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    running = OwnRedis(process, port)
    client = redis.Redis(port=port, socket_connect_timeout=0.5)
    deadline = time.monotonic() + 20
    while True:  # poll until it accepts connections (it takes a few milliseconds)
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.02)
    client.close()
    try:
        yield running
    finally:
        if process.poll() is None:
            running.kill()


def forget_redis_outages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with Redis answering, whatever an earlier test did to its own Redis."""
    from config.cache_outage import redis_outage

    for name, value in {
        "down_since": None,
        "_last_try": 0.0,
        "_last_log": None,
        "_failures_since_log": 0,
    }.items():
        monkeypatch.setattr(redis_outage, name, value)

"""Shared by the rate-limit and Redis-outage tests: a clock they move, and Redis servers."""

import contextlib
import shutil
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import redis


class SteppedClock:
    """Stands in for time.time in serving.ratelimit (or time.monotonic in serving.cache_outage)."""

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
    from serving.cache_outage import redis_outage

    for name, value in {
        "down_since": None,
        "_last_try": 0.0,
        "_last_log": None,
        "_failures_since_log": 0,
    }.items():
        monkeypatch.setattr(redis_outage, name, value)


def point_the_site_at(settings, redis_url: str) -> None:
    """The settings REDIS_URL gives production (config/settings.py), on the test's own Redis."""
    settings.REDIS_URL = redis_url
    settings.RATE_LIMIT_KEY_PREFIX = "felab-test:ratelimit"
    settings.CACHES = {
        "default": {
            "BACKEND": "serving.cache_outage.ResilientRedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": "felab-test",
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
        },
    }
    settings.SESSION_CACHE_ALIAS = "default"


class _Pipe(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.server.upstream_port))
        self.server.open_sockets.extend([self.request, upstream])
        threading.Thread(target=_copy, args=(upstream, self.request), daemon=True).start()
        _copy(self.request, upstream)


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


class _Proxy(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, port: int, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.open_sockets: list[socket.socket] = []
        super().__init__(("127.0.0.1", port), _Pipe)


class NetworkToRedis:
    """A TCP hop between the site and its Redis that the test can cut and mend: Redis stays up
    and keeps what it holds, but nothing the site sends meanwhile reaches it."""

    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.port = free_port()
        self._proxy: _Proxy | None = None
        self.mend()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def mend(self) -> None:
        self._proxy = _Proxy(self.port, self.redis_port)
        threading.Thread(target=self._proxy.serve_forever, daemon=True).start()

    def cut(self) -> None:
        if self._proxy is None:
            return
        self._proxy.shutdown()
        self._proxy.server_close()
        for end in self._proxy.open_sockets:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
        self._proxy = None

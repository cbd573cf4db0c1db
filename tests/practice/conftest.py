"""A real practice server on a free port, served by uvicorn in a background thread.

The server runs exactly as ``manage.py practice_server`` runs it (same uvicorn settings, same
event loop), only with short decode steps so that the suite stays quick.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import uvicorn

from felab_sim.engine.sweep.sweep_params import ServerParams
from felab_sim.practice import PracticeApp
from felab_sim.practice.serve import listen_socket, uvicorn_config

# Fast enough to keep replies of a few dozen tokens well under a second, slow enough that a
# step is still many times the loop's own scheduling jitter (~0.2 ms here).
FAST_STEP_MS = 2.0


class RunningServer:
    """``app`` defaults to a practice server with ``params``; tests may serve another ASGI app."""

    def __init__(self, params: ServerParams, app: object | None = None) -> None:
        self.params = params
        self.app = app if app is not None else PracticeApp(params)
        self._sock = listen_socket("127.0.0.1", 0)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.api = f"{self.url}/v1"
        self._server = uvicorn.Server(uvicorn_config(self.app, log_level=logging.WARNING))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name="practice-server", daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the practice server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def health(self) -> dict[str, object]:
        with urllib.request.urlopen(f"{self.url}/health", timeout=5) as response:
            return json.load(response)

    def wait_idle(self, timeout: float = 2.0) -> float:
        """Seconds until no request holds or waits for a slot; fails after ``timeout``."""
        start = time.monotonic()
        while True:
            status = self.health()
            if status["active"] == 0 and status["waiting"] == 0:
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise AssertionError(f"server still busy after {timeout} s: {status}")
            time.sleep(0.005)


@contextlib.contextmanager
def serving(params: ServerParams, app: object | None = None) -> Iterator[RunningServer]:
    server = RunningServer(params, app)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def server() -> Iterator[RunningServer]:
    """The shared server: default rules but a fast step. Tests leave it idle."""
    with serving(ServerParams(step_ms=FAST_STEP_MS)) as running:
        yield running


@dataclass
class CommandServer:
    """``manage.py practice_server`` in its own process: its port and first /health answer, and
    once stopped, what it printed and its exit code."""

    port: int
    health: dict = field(default_factory=dict)
    output: str = ""
    returncode: int | None = None


@contextlib.contextmanager
def practice_server_command(*options: str) -> Iterator[CommandServer]:
    """The command on a free port with these options, yielded once /health answers (20 s at most),
    then stopped with Ctrl-C (SIGINT), as a person stops it; killed if it outlives the block."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "practice_server", "--port", str(port), *options],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    server = CommandServer(port)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    server.health = json.load(response)
                break
            except (urllib.error.URLError, ConnectionError):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(process.communicate()[0]) from None
                time.sleep(0.05)
        yield server
        process.send_signal(signal.SIGINT)
        server.output, _ = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        server.returncode = process.returncode

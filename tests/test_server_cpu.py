"""The benchmarks' reading of gunicorn's CPU time (tests/support/server_cpu.py) while workers come and go."""

from __future__ import annotations

import builtins
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.support import server_cpu


@dataclass
class _Site:
    """What server_cpu_seconds reads of a running site: the master and its workers' pids."""

    process: subprocess.Popen
    workers: list[int]

    def worker_pids(self) -> list[int]:
        return self.workers


def _idle_child() -> subprocess.Popen:
    """A process asleep, whose CPU time no longer moves: started, and waited for until it says so."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print('asleep', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline() == "asleep\n"  # its start-up's CPU time is all spent by now
    return child


def _stop(child: subprocess.Popen) -> None:
    child.kill()
    child.wait()
    child.stdout.close()


def test_a_worker_reaped_between_listing_and_reading_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # gunicorn replaces a worker after max_requests: its /proc/PID/stat can be opened just before
    # the master reaps it and read just after, which the kernel answers with ESRCH. A run of
    # bench/bench_http.py ended on that (ProcessLookupError) two minutes in.
    master, worker = _idle_child(), _idle_child()
    real_open = builtins.open

    def open_then_reap(path, *args, **kwargs):
        handle = real_open(path, *args, **kwargs)
        if path == f"/proc/{worker.pid}/stat":
            _stop(worker)
        return handle

    try:
        monkeypatch.setattr(builtins, "open", open_then_reap)
        total = server_cpu.server_cpu_seconds(_Site(master, [worker.pid]))
        monkeypatch.undo()
        assert total == server_cpu.cpu_seconds(master.pid)
    finally:
        for child in (master, worker):
            _stop(child)


def test_a_worker_gone_before_its_file_is_opened_is_left_out() -> None:
    master, worker = _idle_child(), _idle_child()
    _stop(worker)
    try:
        total = server_cpu.server_cpu_seconds(_Site(master, [worker.pid]))
        assert total == server_cpu.cpu_seconds(master.pid)
    finally:
        _stop(master)

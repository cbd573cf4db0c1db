"""gunicorn's CPU time, read from /proc: what bench/bench_http.py and bench/bench_server_cpu.py
report per request, and what tests/test_server_cpu.py checks while workers come and go."""

from __future__ import annotations

import contextlib
import os

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used, and the children it has waited for (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # after the command, which may hold spaces
    # utime, stime, cutime, cstime: fields 14 to 17 of proc(5), here from the state (field 3) on.
    return sum(int(value) for value in fields[11:15]) / CLOCK_TICKS


def server_cpu_seconds(site) -> float:
    """gunicorn's CPU time so far: the master's (with the workers it has reaped) and the live workers'."""
    total = cpu_seconds(site.process.pid)
    for pid in site.worker_pids():
        # A worker restarted meanwhile (max_requests) is gone: its time is in the master's now.
        # Its file may be gone before the open, or opened and then read after the master reaped
        # it, which the kernel answers with ESRCH.
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += cpu_seconds(pid)
    return total

"""Which process is doing a piece of work, and whether it is still alive: how task workers
tell a run whose worker was killed (even by SIGKILL, which runs no clean-up) from one still
measuring. No Django here.

A process is named ``host/boot/pid/start``: the machine's name, its boot (two machines, or two
boots of one, never share a pid space), the pid, and when the process started (a pid reused by
a later process has another start). Only a process of this machine and boot can be judged by
looking; for any other, ``is_alive`` answers None and the caller falls back on heartbeats.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

_PROC = Path("/proc")


def _boot_id() -> str:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:  # not Linux: the host's name alone
        return "-"


def _stat(pid: int) -> tuple[str, str] | None:
    """A live process's state letter and start time (clock ticks after boot); None if gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    after = text[text.rindex(")") + 2 :].split()
    return after[0], after[19]


def _host() -> str:
    return socket.gethostname()[:24].replace("/", "-")


def process_name(pid: int | None = None) -> str:
    """This process's name (or ``pid``'s on this machine), at most 64 characters."""
    pid = os.getpid() if pid is None else pid
    stat = _stat(pid)
    return f"{_host()}/{_boot_id()}/{pid}/{stat[1] if stat else '-'}"


def is_alive(name: str) -> bool | None:
    """Whether the named process still runs; None when it is not this machine's to judge."""
    try:
        host, boot, pid_text, start = name.split("/")
        pid = int(pid_text)
    except ValueError:
        return None
    if host != _host() or boot != _boot_id():
        return None
    stat = _stat(pid)
    if stat is None:
        if _PROC.is_dir():
            return False
        try:  # no /proc: ask the kernel (a reused pid reads as alive: heartbeats catch that)
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    state, started = stat
    # A zombie was killed and not yet waited for by its parent: it runs nothing any more.
    return state != "Z" and (start == "-" or started == start)

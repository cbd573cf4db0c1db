"""At most N heavy simulations at once on a host, whichever gunicorn worker asks for one.

A heavy sweep keeps a core busy for up to ~250 ms; sync workers that each ran one at the same
time would take every core from the other pages. A permit is an flock on a file in a folder that
the host's workers share: the kernel releases it when its holder ends, even by SIGKILL, so a
killed worker never leaks a permit. No Django here: the views pass in the settings.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SimulatorBusy(Exception):
    """Every permit stayed taken for the whole wait."""


@contextmanager
def simulation_permit(directory: Path, permits: int, wait_s: float, poll_s: float = 0.01) -> Iterator[int]:
    """Hold one of `permits` permits while the block runs; SimulatorBusy after `wait_s` without one."""
    directory.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    while True:
        for index in range(permits):
            handle = (directory / f"permit-{index}.lock").open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            try:
                yield index
                return
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
        if time.monotonic() >= deadline:
            raise SimulatorBusy
        time.sleep(poll_s)

"""`make run` in a terminal: Ctrl-C stops the site and the practice server, and nothing crashes."""

import os
import pty
import select
import shutil
import signal
import socket
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _read_until(fd: int, output: bytearray, done, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the terminal closed: everything on it exited
            return
        if not chunk:
            return
        output += chunk


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_ctrl_c_stops_make_run_cleanly(tmp_path):
    web, practice = _free_port(), _free_port()
    pid, fd = pty.fork()
    if pid == 0:  # the child: make run on a terminal of its own, with a throwaway database
        os.chdir(ROOT)
        # As a terminal's shell starts it: a suite started in the background (`pytest &`,
        # nohup) passes SIGINT down ignored, and Ctrl-C would then reach no one.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp_path / 'run.sqlite3'}"
        # Its own static folder: the checkout's may be served meanwhile by another `make run`.
        os.environ["FELAB_STATIC_ROOT"] = str(tmp_path / "static")
        os.execvp("make", ["make", "run", f"PORT={web}", f"PRACTICE_PORT={practice}"])
    output = bytearray()
    try:
        _read_until(fd, output, lambda: _listening(web) and _listening(practice), timeout=240)
        assert _listening(web) and _listening(practice), (
            _listening(web),
            _listening(practice),
            output.decode(errors="replace")[-300:],
        )
        os.write(fd, b"\x03")  # Ctrl-C, as the terminal sends it to the whole foreground group
        _read_until(fd, output, lambda: False, timeout=30)
    finally:
        finished, _ = os.waitpid(pid, os.WNOHANG)
        if not finished:
            # make's whole group: the site and the practice server would outlive make alone.
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    text = output.decode(errors="replace")
    assert "Segmentation fault" not in text, text[-2000:]
    assert not _listening(web) and not _listening(practice)

"""The content version of one host's workers, in a file of its own beside their file cache.

serving/content_cache.py compares the content version on every request. With Django's file
cache (production on one host, without Redis) reading it through the cache opens the entry's
file, unpickles its expiry and inflates its value: about 20 µs on a quiet machine and 40 µs
inside a request, of every page the site serves. Here the token is the whole content of one
file, which each process keeps open and reads with one ``pread`` (under a microsecond).

Every read goes to the file: a change written by any worker is seen by the next request of
every other. Nothing is inferred from the file's times, which the kernel keeps in steps of a
clock tick, so two tokens written within one tick (an edit's, then its commit's) are never
mistaken for one. A token is rewritten in place, in the same file, so every open descriptor
sees it; if the file itself is removed (its directory cleared), the next read opens it again
by name, or finds none and draws a new token, as when the cache's entry is lost.

A read that meets a write half done gets a token that was never written. That costs a rebuild
of what the process kept, never a stale page: the next read, after the write, differs from it
again, and no later write can produce it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

TOKEN_BYTES = 32  # uuid4().hex
FILE_NAME = "felab-content-version"  # not ".djcache": the file cache's clear() leaves it be


class VersionFile:
    """One process's handle on the token file: read on every request, written on every change."""

    def __init__(self, directory: str | Path, file_name: str = FILE_NAME) -> None:
        self.path = Path(directory) / file_name
        self._lock = threading.Lock()
        self._fd: int | None = None

    def read(self) -> str | None:
        """The token in the file; None when there is no file or it is empty."""
        # Under the lock (a tenth of a µs): another thread may be replacing the descriptor.
        with self._lock:
            fd = self._open_for_reading()
            data = os.pread(fd, 2 * TOKEN_BYTES, 0) if fd is not None else b""
        return data.decode("ascii", "replace") if data else None

    def add(self, token: str) -> str:
        """Write ``token`` if the file holds none yet, and return the token the file holds: of
        workers starting at once, all agree on the first one written."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            # Another worker created it and may still be writing: until then, its token's
            # half is a token of its own, which costs a rebuild (above).
            return self.read() or token
        try:
            os.write(fd, token.encode("ascii"))
        finally:
            os.close(fd)
        return token

    def write(self, token: str) -> None:
        """Replace the token in place: every worker's open descriptor reads the new one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, token.encode("ascii"), 0)
            os.ftruncate(fd, len(token))  # tokens are of one length; a stray longer file is cut
        finally:
            os.close(fd)

    def _open_for_reading(self) -> int | None:
        fd = self._fd
        # A removed file (its link count 0) is reopened by name: a new file may be there.
        if fd is not None and os.fstat(fd).st_nlink > 0:
            return fd
        if fd is not None:
            os.close(fd)
            self._fd = None
        try:
            self._fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        return self._fd

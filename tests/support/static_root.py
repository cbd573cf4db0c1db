"""The static files collected once per test run, for every site and cluster the suite starts.

collectstatic hashes and compresses (Brotli and gzip) every file, about ten seconds of CPU each
time; the sites a test starts only serve the result. The folder is named by a digest of what it
is collected from, so a run whose static sources are unchanged reuses the last run's, and
pytest-xdist's workers take turns through a lock: the first collects, the others wait and reuse.
A site's own folder, never the checkout's `staticfiles/`, so nothing the suite does rewrites files
that another process is serving.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCES = (ROOT / "static", ROOT / "requirements.txt", ROOT / "config" / "settings.py")


def _digest() -> str:
    digest = hashlib.sha256()
    for source in SOURCES:
        files = sorted(source.rglob("*")) if source.is_dir() else [source]
        for path in files:
            if path.is_file():
                digest.update(str(path.relative_to(ROOT)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@cache
def collected_static() -> Path:
    """A folder holding collectstatic's output for the checkout's static files, as `make release` writes it."""
    base = Path(tempfile.gettempdir()) / f"felab-test-static-{os.getuid()}"
    base.mkdir(exist_ok=True)
    folder = base / _digest()
    with (base / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "staticfiles.json").exists():
            partial = Path(tempfile.mkdtemp(prefix="collecting-", dir=base))
            env = {**os.environ, "FELAB_STATIC_ROOT": str(partial)}
            subprocess.run(
                [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                cwd=ROOT,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            shutil.rmtree(folder, ignore_errors=True)
            partial.rename(folder)
    return folder

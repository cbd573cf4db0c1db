"""The practice server and the load generator run without Django: they import nothing of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter where any import of django fails loudly, so a stray import
# anywhere down the chain (not only at the top of these modules) is caught.
PROGRAM = """
import importlib, sys

class NoDjango:
    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django."):
            raise ImportError(f"{name} was imported, but this code must run without Django")
        return None

sys.meta_path.insert(0, NoDjango())
for module in sys.argv[1:]:
    importlib.import_module(module)
print("ok")
"""

DJANGO_FREE = [
    "felab_sim.practice",
    "felab_sim.practice.app",
    "felab_sim.practice.serve",
    "felab_sim.practice.structured",
    "felab_sim.practice.wire",
    "felab_sim.loadgen",
]


def test_the_practice_server_and_loadgen_import_without_django():
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, *DJANGO_FREE], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_guard_itself_catches_a_django_import():
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, "django.conf"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert "must run without Django" in result.stderr

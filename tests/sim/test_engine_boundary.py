"""felab_sim's computing code imports no Django (docs/architecture.md, "The engine boundary").

Each check runs in a fresh interpreter whose import system refuses anything named django, so
a Django import anywhere below these modules, however indirect, fails the test.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "felab_sim" / "engine"
CHARTS = ROOT / "felab_sim" / "charts"
PRACTICE = ROOT / "felab_sim" / "practice"

BLOCKED_IMPORT = """
import importlib, sys

class RefuseDjango:
    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django."):
            raise ImportError(f"{name} imported by code that must not need Django")
        return None

sys.meta_path.insert(0, RefuseDjango())
for name in sys.argv[1:]:
    importlib.import_module(name)
print("imported", len(sys.argv) - 1)
"""


def modules_under(package: Path) -> list[str]:
    """Every module file under a package, so a new one is checked without listing it."""
    modules = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


def import_without_django(*modules: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORT, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_engine_the_charts_and_the_practice_server_import_without_django():
    modules = [*modules_under(ENGINE), *modules_under(CHARTS), *modules_under(PRACTICE)]
    assert {
        "felab_sim.engine.sweep.simulator",
        "felab_sim.engine.calculators.dpo",
        "felab_sim.engine.sweep.loadgen",
    } <= set(modules)
    assert {"felab_sim.charts.svgchart", "felab_sim.charts.plots"} <= set(modules)
    assert {"felab_sim.practice", "felab_sim.practice.serve", "felab_sim.practice.wire"} <= set(modules)
    done = import_without_django(*modules)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"imported {len(modules)}"


def test_the_blocker_does_refuse_django():
    done = import_without_django("felab_sim.models")
    assert done.returncode != 0
    assert "must not need Django" in done.stderr

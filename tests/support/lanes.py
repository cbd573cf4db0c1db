"""Which lane a test runs in, read from where it lives and what it starts, so that a new test
finds its lane without a marker of its own.

- browser: under tests/browser/, or using the Playwright fixtures.
- cluster: under tests/cluster/ or tests/load/ (gunicorn, nginx, PostgreSQL, Redis).
- process: starts a server or another process: a subprocess, `make run`, gunicorn, or a
  practice server (uvicorn) through one of its fixtures or helpers. pytest-django's
  live_server alone is a thread of this process and leaves a test in no lane.

`make check` runs the tests in none of them.
"""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

TESTS = Path(__file__).resolve().parent.parent
BROWSER_DIRS = ("browser",)
CLUSTER_DIRS = ("cluster", "load")
BROWSER_FIXTURES = frozenset({"browser", "page", "page_without_js"})

# What starting a process or a server looks like in this suite's code.
STARTS_A_PROCESS = re.compile(
    r"\bsubprocess\b|\bPopen\b|\bos\.(exec|fork|spawn|posix_spawn)|\bpty\.fork\b|\bmultiprocessing\b"
    r"|\bserving\(|\bRunningServer\(|\buvicorn\.Server\(|\brunning_site\(|\brunning_cluster\(|\bpractice_server\("
)


def _source(obj: object) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return ""


@cache
def _process_helpers(module: ModuleType) -> frozenset[str]:
    """Names of the module's own functions and classes that start a process, so that a test
    calling such a helper (`manage(...)`, `count_from_processes(...)`) counts as starting one."""
    source = _source(module)
    if not source:
        return frozenset()
    lines = source.splitlines()
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            segment = "\n".join(lines[node.lineno - 1 : node.end_lineno])
            if STARTS_A_PROCESS.search(segment):
                names.add(node.name)
    # Helpers imported from the suite's shared modules count too (tests/limits.py's own_redis).
    for name, value in vars(module).items():
        home = getattr(value, "__module__", None) or ""
        shared = home.startswith("tests.") and home != module.__name__
        if (
            shared
            and (inspect.isfunction(value) or inspect.isclass(value))
            and STARTS_A_PROCESS.search(_source(value))
        ):
            names.add(name)
    return frozenset(names)


@cache
def _code_starts_a_process(func: object) -> bool:
    source = _source(func)
    if STARTS_A_PROCESS.search(source):
        return True
    module = inspect.getmodule(func)
    helpers = _process_helpers(module) if module is not None else frozenset()
    return any(re.search(rf"\b{re.escape(name)}\(", source) for name in helpers)


def _fixtures_of(item: pytest.Item) -> list[object]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [
        defs[-1].func for name, defs in info.name2fixturedefs.items() if defs and name in item.fixturenames
    ]


def lanes_of(item: pytest.Item) -> set[str]:
    lanes = set()
    parts = Path(str(item.path)).resolve().relative_to(TESTS).parts
    top = parts[0] if len(parts) > 1 else ""
    fixtures = set(getattr(item, "fixturenames", ()))
    if top in BROWSER_DIRS or fixtures & BROWSER_FIXTURES:
        lanes.add("browser")
    if top in CLUSTER_DIRS:
        lanes.add("cluster")
    function = getattr(item, "function", None)
    if (function is not None and _code_starts_a_process(function)) or any(
        _code_starts_a_process(fixture) for fixture in _fixtures_of(item)
    ):
        lanes.add("process")
    return lanes


def mark_lanes(items: list[pytest.Item]) -> None:
    for item in items:
        for lane in lanes_of(item):
            item.add_marker(getattr(pytest.mark, lane))

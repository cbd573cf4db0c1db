"""The apps' dependencies point one way: quiz may use lessons, lessons never uses quiz.

The card page and the home page belong to lessons; quiz's template tags add the
learner's work to them. Importing quiz from lessons would bring back the cycle.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add("." * node.level + (node.module or ""))
    return modules


def test_lessons_never_imports_quiz():
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in _imported_modules(path) if m.split(".")[0] == "quiz")
        for path in (ROOT / "lessons").rglob("*.py")
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}


def test_quiz_models_know_nothing_of_requests():
    # Who the learner is, from a request and its session, is quiz/learners.py's business.
    modules = _imported_modules(ROOT / "quiz" / "models.py")
    assert not {m for m in modules if m.startswith("django.http")}
    assert not modules & {"quiz.learners", ".learners"}


def test_tests_never_import_the_benchmarks():
    # Harness code the tests share lives in tests/support/; bench/ imports it from there.
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in _imported_modules(path) if m.split(".")[0] == "bench")
        for path in (ROOT / "tests").rglob("*.py")
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}

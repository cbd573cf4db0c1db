"""The apps depend downwards only: config (settings and URLs, which name every app) → quiz
(learner work) → lessons (content) → felab_sim (simulator) → accounts (who may do what) →
pagecache (pages kept per content version) → serving (how pages are served).
docs/architecture.md, "Where things live".

Checked three ways, since each can tie the apps back up: Python imports (any module of an app,
at any indentation), the tag libraries templates/<app>/ loads, and migrations (frozen history:
they import nothing of another app). An app higher up hands its rule to a lower one through a
hook instead (felab_sim.runs.show_starters_by, lessons/templatetags/learner_work.py). lessons
reaches felab_sim's rows only through what felab_sim's AppConfig hands in (lessons/simulator.py,
lessons/content_sections.py), so each app keeps the code that reads and writes its own models.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Top to bottom: an app may import itself and the apps after it.
# config sits on top: its urls.py includes every app's and its settings list them all, while
# no app imports config (they read django.conf.settings).
LAYERS = ["config", "quiz", "lessons", "felab_sim", "accounts", "pagecache", "serving"]
APPS = LAYERS[1:]  # the Django apps, with templates, tag libraries and migrations

# felab_sim's pure code: no Django, so any app may use it (the layers above are about Django apps).
FELAB_SIM_PURE = ("felab_sim.engine", "felab_sim.charts", "felab_sim.practice")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, known: frozenset[str] = frozenset()) -> set[str]:
    """The absolute names of the modules ``path`` imports, relative imports resolved. For
    ``from package import name``: package.name if it is one of the ``known`` modules, else the
    package; with no modules known, both (for checks that look only at the top package)."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                if submodule in known:
                    modules.add(submodule)
                else:
                    modules.add(module)
                    if not known:
                        modules.add(submodule)
    return modules


def _sources(app: str) -> list[Path]:
    return sorted((ROOT / app).rglob("*.py"))


def _layer(module: str) -> int | None:
    top = module.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


def _offenders(paths, allowed) -> dict[str, list[str]]:
    found = {}
    for path in paths:
        bad = sorted(module for module in _imported_modules(path) if not allowed(path, module))
        if bad:
            found[str(path.relative_to(ROOT))] = bad
    return found


def test_apps_import_downwards_only():
    def allowed(path: Path, module: str) -> bool:
        layer = _layer(module)
        return layer is None or layer >= LAYERS.index(path.relative_to(ROOT).parts[0])

    assert _offenders([path for app in LAYERS for path in _sources(app)], allowed) == {}


def test_lessons_imports_of_felab_sim_only_its_pure_code():
    # Cards and the content files reach felab_sim's rows through what felab_sim hands in
    # (lessons/simulator.py, lessons/content_sections.py), never through its models.
    def allowed(path: Path, module: str) -> bool:
        return module.split(".")[0] != "felab_sim" or module.startswith(FELAB_SIM_PURE)

    assert _offenders(_sources("lessons"), allowed) == {}


def test_felab_sim_hands_lessons_its_sections_and_card_simulator():
    from django.apps import apps

    from lessons.content_sections import installed_sections
    from lessons.simulator import simulator

    assert [section.file_name for section in installed_sections()] == [
        "scenarios.yaml",
        "parameter_sets.yaml",
    ]
    assert simulator() is apps.get_app_config("felab_sim").card_simulator


def test_no_import_circle_inside_the_project():
    """Imports inside functions count: a circle there is one the reader must still untie."""
    modules = {_module_name(path): path for app in LAYERS for path in _sources(app)}
    known = frozenset(modules)
    graph = {
        name: {
            imported for imported in _imported_modules(path, known) if imported in known and imported != name
        }
        for name, path in modules.items()
    }
    circles = []
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(name: str) -> None:
        state[name] = "open"
        stack.append(name)
        for imported in sorted(graph[name]):
            if state.get(imported) == "open":
                circles.append([*stack[stack.index(imported) :], imported])
            elif imported not in state:
                visit(imported)
        stack.pop()
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert circles == []


# felab_sim's pure packages, each allowed the ones after it: charts draw what the engine computes,
# and the engine knows nothing of how it is drawn or served.
PURE_PACKAGES = ["felab_sim.charts", "felab_sim.practice", "felab_sim.engine"]


def _pure_import_allowed(path: Path, module: str) -> bool:
    if module.split(".")[0].startswith("django"):
        return False
    if _layer(module) is None:
        return True
    own = next(i for i, package in enumerate(PURE_PACKAGES) if _module_name(path).startswith(package))
    return module.startswith(tuple(PURE_PACKAGES[own:]))


def test_felab_sim_pure_code_imports_neither_django_nor_the_rest_of_felab_sim():
    # tests/sim/test_engine_boundary.py imports them with Django refused; this names the file.
    pure = [
        path for package in PURE_PACKAGES for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py"))
    ]
    assert len(pure) > 30
    assert _offenders(pure, _pure_import_allowed) == {}


def test_the_pure_check_refuses_the_django_side_and_an_arrow_back_up():
    engine, charts = ROOT / "felab_sim/engine/sweep/simulator.py", ROOT / "felab_sim/charts/svgchart.py"
    assert _pure_import_allowed(charts, "felab_sim.engine.core.numbers")
    assert not _pure_import_allowed(engine, "felab_sim.charts.svgchart")
    assert not _pure_import_allowed(engine, "felab_sim.models")
    assert not _pure_import_allowed(charts, "django.utils.html")


def _tag_library_owners() -> dict[str, str]:
    return {path.stem: app for app in APPS for path in (ROOT / app / "templatetags").glob("*.py")}


def test_templates_load_only_their_own_or_a_lower_apps_tags():
    owners = _tag_library_owners()
    loads = set()
    for app in APPS:
        for path in sorted((ROOT / "templates" / app).rglob("*.html")):
            for names in re.findall(r"{%\s*load\s+(.*?)\s*%}", path.read_text()):
                for name in names.split():
                    owner = owners.get(name)
                    if owner is not None and LAYERS.index(owner) < LAYERS.index(app):
                        loads.add((str(path.relative_to(ROOT)), name))
    assert loads == set()


def test_the_template_check_sees_a_load_from_above():
    # The check above must not pass by reading nothing: quiz's library is known, and above lessons.
    owners = _tag_library_owners()
    assert owners["quiz_tags"] == "quiz" and owners["learner_work"] == "lessons"
    assert re.findall(r"{%\s*load\s+(.*?)\s*%}", "{% load content_fragments quiz_tags %}") == [
        "content_fragments quiz_tags"
    ]


def test_migrations_import_no_other_apps_code():
    def allowed(path: Path, module: str) -> bool:
        top = module.split(".")[0]
        return _layer(module) is None or top == path.relative_to(ROOT).parts[0]

    migrations = [path for app in APPS for path in sorted((ROOT / app / "migrations").glob("*.py"))]
    assert migrations
    assert _offenders(migrations, allowed) == {}


def test_quiz_models_know_nothing_of_requests():
    # Who the learner is, from a request and its session, is quiz/learners.py's business.
    modules = _imported_modules(ROOT / "quiz" / "models.py")
    assert not {m for m in modules if m.startswith("django.http")}
    assert "quiz.learners" not in modules


def test_tests_never_import_the_benchmarks():
    # Harness code the tests share lives in tests/support/; bench/ imports it from there.
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in _imported_modules(path) if m.split(".")[0] == "bench")
        for path in (ROOT / "tests").rglob("*.py")
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}

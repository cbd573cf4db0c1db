"""The apps depend downwards only: quiz (learner work) → lessons (content) → felab_sim
(simulator) → config (shared machinery). docs: /work/shared/DESIGN.md, "apps import downwards".

Checked three ways, since each can tie the apps back up: Python imports (any module of an app,
at any indentation), the tag libraries templates/<app>/ loads, and migrations (frozen history:
they import nothing of another app). An app higher up hands its rule to a lower one through a
hook instead (felab_sim.runs.show_starters_by, lessons/templatetags/learner_work.py).
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Top to bottom: an app may import itself and the apps after it.
LAYERS = ["quiz", "lessons", "felab_sim", "config"]
APPS = LAYERS[:-1]  # the Django apps, with templates, tag libraries and migrations

# Still importing felab_sim's models from lessons: the Card reads its scenario and the parameter
# sets it cites, and import_lessons/export_lessons read and write both. Left for the step that
# gives felab_sim its own content-file section; nothing may join this list.
LESSONS_ON_SIM_MODELS_LEFT = {"lessons/content_files.py", "lessons/models.py"}
# felab_sim's calculator and simulator pages keep their parts with {% content_fragment %}, a tag
# library that stands in lessons but uses only config's machinery: it goes down when the layout
# step moves it. Nothing may join this list.
TEMPLATE_LOADS_LEFT = {
    ("templates/felab_sim/calc_body.html", "content_fragments"),
    ("templates/felab_sim/sim.html", "content_fragments"),
}


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


def test_lessons_imports_no_model_of_felab_sim():
    def allowed(path: Path, module: str) -> bool:
        return not (module == "felab_sim.models" or module.startswith("felab_sim.models."))

    assert set(_offenders(_sources("lessons"), allowed)) == LESSONS_ON_SIM_MODELS_LEFT


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
    # tests/sim/test_core_boundary.py imports them with Django refused; this names the file.
    pure = [
        path for package in PURE_PACKAGES for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py"))
    ]
    assert len(pure) > 30
    assert _offenders(pure, _pure_import_allowed) == {}


def test_the_pure_check_refuses_the_django_side_and_an_arrow_back_up():
    engine, charts = ROOT / "felab_sim/engine/simulator.py", ROOT / "felab_sim/charts/svgchart.py"
    assert _pure_import_allowed(charts, "felab_sim.engine.numbers")
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
    assert loads == TEMPLATE_LOADS_LEFT


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

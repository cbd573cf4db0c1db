"""The engine's packages import one way: each only from the packages on a line above it
(felab_sim/engine/__init__.py), imports inside functions included, so no package leans on one
that leans back on it."""

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "felab_sim" / "engine"
LAYERS = (
    ("core",),
    ("models",),
    ("hardware",),
    ("serving", "sweep"),
    ("calculators",),
    ("problems", "course"),
)
LAYER_OF = {package: depth for depth, packages in enumerate(LAYERS) for package in packages}


def engine_packages_imported(source: str, package: str) -> set[str]:
    """The engine packages a module of ``package`` imports, its own left out."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                continue  # its own package
            if node.level == 2:
                name = (node.module or "").split(".")[0]
                names = [name] if name else [alias.name for alias in node.names]
            elif node.level == 0 and (node.module or "").startswith("felab_sim.engine."):
                names = [node.module.split(".")[2]]
            else:
                continue
            found.update(names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("felab_sim.engine."))
    return found - {package}


def imports_against_the_layers(source: str, package: str) -> set[str]:
    """The packages ``source`` (a module of ``package``) imports that are not on a line above it."""
    return {name for name in engine_packages_imported(source, package) if LAYER_OF[name] >= LAYER_OF[package]}


def test_every_engine_package_has_its_line():
    packages = {path.name for path in ENGINE.iterdir() if (path / "__init__.py").exists()}
    assert packages == set(LAYER_OF)
    assert not [path.name for path in ENGINE.glob("*.py") if path.name != "__init__.py"]


def test_each_package_imports_only_the_lines_above_it():
    wrong = {}
    for path in sorted(ENGINE.rglob("*.py")):
        package = path.relative_to(ENGINE).parts[0]
        if package == "__init__.py":
            assert not engine_packages_imported(path.read_text(), "")
            continue
        against = imports_against_the_layers(path.read_text(), package)
        if against:
            wrong[str(path.relative_to(ENGINE))] = sorted(against)
    assert not wrong


def test_the_check_sees_an_import_up_a_line_a_sideways_one_and_one_inside_a_function():
    assert imports_against_the_layers("from ..course import chain\n", "core") == {"course"}
    assert imports_against_the_layers("from ..sweep.metrics import capacity\n", "serving") == {"sweep"}
    lazy = "def f():\n    from felab_sim.engine.calculators import CALCULATORS\n"
    assert imports_against_the_layers(lazy, "models") == {"calculators"}
    assert not imports_against_the_layers("from ..models.model_shapes import ModelShape\n", "hardware")
    assert not imports_against_the_layers("from .step_cost import step_cost\n", "hardware")

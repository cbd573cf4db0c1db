"""docs/architecture.md's "Adding a calculator" stays true: every file its checklist names exists
for every calculator, and a calculator written by that checklist alone, as one new module in a
package, is found and passes what every calculator is held to. No database."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from felab_sim.charts import svgchart
from felab_sim.engine import calculators
from felab_sim.engine.calculators import CALCULATORS, discovered
from tests.sim.test_calculators import MODULES
from tests.support.calculators import typed_example

ROOT = Path(__file__).resolve().parents[2]

# The checklist's one new file: a calculator module, whose checklist item names every field.
HALF = """
from felab_sim.engine.core.calculator import Calculator, OutputSpec, WorkedExample
from felab_sim.engine.core.chart import BLUE, evenly, layout, line, these_settings
from felab_sim.engine.core.params import Param

TOKENS = Param("tokens", "int", 100, "Tokens to halve.", "tokens", low=0, high=1000)


def _compute(p):
    return {"half": p["tokens"] / 2}


def _chart(p, measured):
    xs = evenly(1000)
    data = [line("half", xs, [x / 2 for x in xs], BLUE), these_settings(p["tokens"], p["tokens"] / 2)]
    return {"data": data, "layout": layout("tokens", "half")}


CALCULATOR = Calculator(
    name="half",
    order=ORDER,
    title="Half",
    lessons=("00",),
    meaning="Half of it.",
    params=(TOKENS,),
    outputs=(OutputSpec("half", "tokens", "half the tokens"),),
    compute=_compute,
    chart=_chart,
    chart_description="Half against tokens.",
    examples=(WorkedExample("half of 300 is 150", {"tokens": "300"}, "half", "150 tokens"),),
)
"""


def _checklist() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("### Adding a calculator", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- \[ \] (.+?)(?=^- \[ \]|^$)", section, re.M | re.S)


def _named_files(item: str) -> list[str]:
    return [word for word in re.findall(r"[\w./-]+\.(?:py|md)", item) if "/" in word]


def _existing(path: str) -> bool:
    return (ROOT / path).is_file() or (ROOT / "felab_sim" / path).is_file()


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, modules: dict[str, str]) -> str:
    # Named for the test, so no test finds another's package among the modules already imported.
    package = tmp_path / ("throwaway_" + re.sub(r"\W", "_", tmp_path.name))
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, source in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return package.name


def test_every_checklist_item_names_files_and_each_exists_for_every_calculator():
    items = _checklist()
    assert len(items) == 3
    for item in items:
        files = _named_files(item)
        assert files, item
        for path in files:
            targets = [path.replace("NAME", module) for module in MODULES] if "NAME" in path else [path]
            assert all(_existing(target) for target in targets), path


def test_a_calculator_written_by_the_checklist_is_found_and_holds_to_every_rule(tmp_path, monkeypatch):
    package = _package(tmp_path, monkeypatch, {"half": HALF.replace("ORDER", "10")})
    found = discovered(package)
    assert list(found) == ["half"]
    half = found["half"]
    for example in half.examples:
        assert half.run(example.params).outputs[example.output].text() == example.shown
    assert typed_example(half) == ("tokens", half.examples[0])
    figure = half.chart(half.run({}).params, [])
    assert "<svg" in svgchart.render(figure)


def test_discovery_orders_by_the_declared_order_and_refuses_a_tie(tmp_path, monkeypatch):
    double = HALF.replace('name="half"', 'name="double"')
    package = _package(
        tmp_path, monkeypatch, {"half": HALF.replace("ORDER", "20"), "double": double.replace("ORDER", "5")}
    )
    assert list(discovered(package)) == ["double", "half"]
    (tmp_path / package / "twin.py").write_text(
        HALF.replace("ORDER", "5").replace('name="half"', 'name="twin"')
    )
    with pytest.raises(TypeError, match="declare the same order, 5"):
        discovered(package)


def test_the_live_package_is_the_one_walked():
    assert discovered(calculators.__name__).keys() == CALCULATORS.keys()

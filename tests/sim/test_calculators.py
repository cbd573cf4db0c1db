"""What holds for every calculator: found by walking its package, in its declared order, each
reproducing its own worked examples, computed or refused at its ranges' edges. Each calculator's
own formulas are tested in tests/sim/calculators/test_NAME.py. No database."""

import math
import pkgutil
from pathlib import Path

import pytest

from felab_sim.charts.calc_charts import chart_json
from felab_sim.engine import calculators
from felab_sim.engine.calculators import CALCULATORS, UnknownCalculator, get
from felab_sim.engine.core.params import ParamError
from tests.support.calculators import typed_example

ROOT = Path(__file__).resolve().parents[2]
MODULES = [module.name for module in pkgutil.iter_modules(calculators.__path__)]
# URLs, the CLI, card citations and docs/calculators.md name them: they never change.
PUBLIC_NAMES = [
    "prefill",
    "prefix-cache",
    "decode-ceiling",
    "kv-cache",
    "speculative",
    "roofline",
    "sizing",
    "cost",
    "finetune-memory",
    "dpo",
    "continuous-batching",
]
EXAMPLES = [(name, example) for name, calculator in CALCULATORS.items() for example in calculator.examples]


def test_the_courses_calculators_keep_their_public_names_and_order():
    assert [name for name in CALCULATORS if name in PUBLIC_NAMES] == PUBLIC_NAMES


def test_every_module_of_the_package_is_a_calculator_found_in_its_declared_order():
    assert len(MODULES) == len(CALCULATORS) >= len(PUBLIC_NAMES)
    assert {module.replace("_", "-") for module in MODULES} == set(CALCULATORS)
    orders = [calculator.order for calculator in CALCULATORS.values()]
    assert orders == sorted(orders)


@pytest.mark.parametrize("module", MODULES)
def test_every_calculator_has_its_own_test_file(module):
    assert (ROOT / "tests" / "sim" / "calculators" / f"test_{module}.py").is_file()


@pytest.mark.parametrize(("name", "example"), EXAMPLES, ids=[f"{n}: {e.what}" for n, e in EXAMPLES])
def test_every_calculator_reproduces_its_worked_examples(name, example):
    assert CALCULATORS[name].run(example.params).outputs[example.output].text() == example.shown


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_point_of_every_chart_at_its_defaults_has_a_place_on_its_axis(name):
    # The course's measurements are drawn where they were measured (a prompt's tokens, a context).
    calculator = CALCULATORS[name]
    for trace in calculator.chart(calculator.run({}).params, [])["data"]:
        assert None not in trace["x"], trace["name"]
        assert len(trace["x"]) == len(trace["y"]), trace["name"]


@pytest.mark.parametrize("name", list(CALCULATORS))
def test_every_calculator_has_a_worked_example_the_browser_test_types_in(name):
    assert typed_example(CALCULATORS[name]) is not None


def test_an_unknown_calculator_is_named_in_the_error():
    with pytest.raises(UnknownCalculator, match="'nope' is not a calculator"):
        get("nope")


def _edges() -> list[tuple[str, str, float]]:
    """Each numeric parameter at its range's ends, just inside them, and at the smallest floats."""
    cases = []
    for name, calculator in CALCULATORS.items():
        for param in calculator.params:
            if param.kind not in ("int", "float"):
                continue
            values = {v for v in (param.low, param.high) if v is not None}
            if param.low is not None:
                values.add(math.nextafter(param.low, math.inf))
            if param.high is not None:
                values.add(param.high * 0.67)
            values |= {5e-324, 1e-320}
            cases += [(name, param.name, int(v) if param.kind == "int" else v) for v in sorted(values)]
    return cases


@pytest.mark.parametrize(("name", "param", "value"), _edges())
def test_every_calculator_is_refused_or_computed_and_charted_at_its_edges(name, param, value):
    """A value the declaration accepts is computed, its chart drawn; any other is a ParamError."""
    calculator = CALCULATORS[name]
    try:
        result = calculator.run({param: value})
    except ParamError as error:
        # Its own name, or a cross-parameter rule's (efficiency_low above efficiency_high).
        assert error.param in {p.name for p in calculator.params}
        return
    for key, out in result.outputs.items():
        assert out.value is None or isinstance(out.value, str) or math.isfinite(out.value), key
        out.text()
    chart_json(name, result, [])


@pytest.mark.parametrize(
    ("name", "param", "value"),
    [("decode-ceiling", "bandwidth_gbs", 5e-324), ("decode-ceiling", "params_b", 1e-320)],
)
def test_a_divisor_below_its_positive_minimum_is_refused_by_name(name, param, value):
    with pytest.raises(ParamError) as refused:
        CALCULATORS[name].run({param: value})
    assert refused.value.param == param
    assert "at least 0." in refused.value.message


def test_a_number_that_overflows_is_undefined_not_infinite():
    # Everything cached and an overhead of 1e-320 ms: the repeat takes 1e-320 ms, and
    # first ÷ repeat is beyond any float.
    result = CALCULATORS["prefix-cache"].run(
        {"suffix_chars": 0, "block_tokens": 1, "overhead_ms": 1e-320, "prefill_tok_s": 10_000_000}
    )
    assert result.value("speedup") is None

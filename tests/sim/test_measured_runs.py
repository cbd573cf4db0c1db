"""Which calculator pages draw real runs over their model: registered at start-up, by name."""

import pytest

from felab_sim import prefix_runs
from felab_sim.engine.calculators import CALCULATORS
from felab_sim.pages import calculator_page


def test_the_prefix_cache_page_draws_the_practice_servers_runs():
    # Filled by FelabSimConfig.ready, not by whoever happens to import prefix_runs first.
    assert {"prefix-cache": prefix_runs.prefix_cache_run} == calculator_page.MEASURED_RUNS


def test_every_page_with_runs_is_a_calculator():
    assert set(calculator_page.MEASURED_RUNS) <= set(CALCULATORS)


def test_runs_for_a_calculator_that_does_not_exist_are_refused():
    with pytest.raises(LookupError, match="'nope' is not a calculator"):
        calculator_page.show_measured_runs("nope", prefix_runs.prefix_cache_run)
    assert "nope" not in calculator_page.MEASURED_RUNS

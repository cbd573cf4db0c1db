"""What the tests of real runs (sweeps and prefix-cache runs) share: a fast practice server."""

import pytest

from felab_sim.engine.sweep.sweep_params import ServerParams
from tests.practice.conftest import serving

# 2 ms decode steps: a run's requests finish quickly, whatever their number.
FAST = ServerParams(step_ms=2.0)


@pytest.fixture
def practice_server(settings):
    """A real practice server on a free port, where runs started from the site are sent."""
    with serving(FAST) as server:
        settings.PRACTICE_SERVER_URL = server.api
        yield server

"""Heavy simulations take one of the host's few permits, so a flood of them cannot take every
core from the other pages; the limits are in the 400 message."""

import fcntl

import pytest

from felab_sim.pages.permits import SimulatorBusy, simulation_permit

pytestmark = pytest.mark.django_db

# More work than SIM_LIGHT_WORK and never simulated by another test (a cached sweep costs nothing).
HEAVY = {"levels": "100,101", "slots": "64", "slo_ms": "4321"}


@pytest.fixture
def one_permit(settings, tmp_path):
    settings.SIM_PERMITS, settings.SIM_PERMIT_WAIT_S, settings.SIM_PERMITS_DIR = 1, 0.2, tmp_path
    return tmp_path


def hold(permit_file):
    """Take the permit as another gunicorn worker would: an flock on its own open file."""
    handle = permit_file.open("a")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return handle


@pytest.mark.parametrize("url", ["/sim/", "/sim/sweep.json"])
def test_a_heavy_sweep_waits_for_a_permit_then_is_told_to_retry(client, one_permit, url):
    handle = hold(one_permit / "permit-0.lock")
    try:
        busy = client.get(url, HEAVY)
        assert busy.status_code == 503 and busy["Retry-After"] == "1"
        assert "The simulator is busy with other large sweeps (at most 1 at once)" in busy.content.decode()
        # Light sweeps and other pages never wait for a permit.
        assert client.get(url, {"levels": "1,8", "slo_ms": "4321"}).status_code == 200
        assert client.get("/").status_code == 200
    finally:
        handle.close()
    assert client.get(url, HEAVY).status_code == 200


def test_a_permit_is_free_again_after_its_holder_raised(tmp_path):
    with pytest.raises(RuntimeError), simulation_permit(tmp_path, 1, 0.0):
        raise RuntimeError("the simulation failed")
    with simulation_permit(tmp_path, 1, 0.0) as index:
        assert index == 0
        with pytest.raises(SimulatorBusy), simulation_permit(tmp_path, 1, 0.05):
            pass


def test_the_web_cap_is_stated_in_the_400(client):
    response = client.get("/sim/sweep.json", {"levels": "512,768,1024", "max_tokens": "200"})
    message = response.json()["error"]["message"]
    assert response.status_code == 400 and "the web cap is 2,000,000" in message

"""Real sweeps started from the browser against a real (fast) practice server."""

import time

import pytest
from django.test import Client

from felab_sim.core.model import ServerParams
from felab_sim.models import SweepRun, SweepRunLevel
from felab_sim.runs import STALE_AFTER
from tests.practice.conftest import serving

START_URL = "/sim/runs/"
FAST = ServerParams(step_ms=2.0)


@pytest.fixture
def practice_server(settings):
    with serving(FAST) as server:
        settings.PRACTICE_SERVER_URL = server.api
        yield server


def wait_finished(run_id: int, timeout: float = 60) -> SweepRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = SweepRun.objects.get(pk=run_id)
        if not run.is_running:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} still running after {timeout} s")


@pytest.mark.django_db
def test_anonymous_must_log_in(client):
    response = client.post(START_URL, {"levels": "1"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not SweepRun.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_student_runs_a_sweep_and_sees_it_over_the_model(student_client, student, practice_server):
    response = student_client.post(START_URL, {"levels": "1,2", "max_tokens": "16", "slo_ms": "500"})
    run = SweepRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/sim/runs/{run.pk}/"
    assert run.started_by == student and run.server_url == practice_server.api
    assert list(run.levels.values_list("conc", "requests")) == [(1, 12), (2, 12)]

    run = wait_finished(run.pk)
    assert run.state == SweepRun.State.DONE, run.error
    levels = list(run.levels.all())
    assert all(level.done == level.requests and level.is_finished for level in levels)
    # A fast server: a 2 ms step plus HTTP gives well over 100 tok/s per user.
    assert levels[0].user_tok_s > 100 and levels[1].agg_tok_s > levels[0].agg_tok_s

    page = student_client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert "Done: capacity C = 2" in page and 'id="run-figure"' in page and "hx-trigger" not in page
    overlay = student_client.get("/sim/", {"levels": "1,2", "run": run.pk}).content.decode()
    assert f"per user (run {run.pk})" in overlay and "(drawn above)" in overlay


@pytest.mark.django_db
def test_one_sweep_at_a_time_for_the_whole_site(student_client, other_student_client, other_student):
    running = SweepRun.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1]})
    response = other_student_client.post(START_URL, {"levels": "1"}, follow=True)
    assert response.redirect_chain[0] == (f"/sim/runs/{running.pk}/", 302)
    assert "A sweep is already running (started at" in response.content.decode()
    assert SweepRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_worker_died_does_not_block_the_site(student_client, practice_server):
    dead = SweepRun.objects.create(server_url=practice_server.api, params={"levels": [1]})
    SweepRun.objects.filter(pk=dead.pk).update(heartbeat_at=dead.heartbeat_at - STALE_AFTER * 2)
    student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
    dead.refresh_from_db()
    assert dead.state == SweepRun.State.FAILED and "stopped reporting" in dead.error
    wait_finished(SweepRun.objects.latest("started_at").pk)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("levels", "max_tokens", "message"),
    [
        ("1,128", "128", "goes up to C = 64"),
        ("32,48,64", "128", "this sweep sends 432 requests"),
        ("1", "1000", "allows at most 256"),
        ("x", "128", "levels must be"),
    ],
)
def test_sweeps_too_big_for_the_browser_are_refused(student_client, levels, max_tokens, message):
    response = student_client.post(START_URL, {"levels": levels, "max_tokens": max_tokens}, follow=True)
    assert message in response.content.decode()
    assert not SweepRun.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_server_fails_the_run_with_a_message(student_client, settings):
    settings.PRACTICE_SERVER_URL = "http://127.0.0.1:9/v1"
    student_client.post(START_URL, {"levels": "1"})
    run = wait_finished(SweepRun.objects.get().pk)
    assert run.state == SweepRun.State.FAILED and "is the server running?" in run.error
    assert "Failed: " in Client().get(f"/sim/runs/{run.pk}/").content.decode()


@pytest.mark.django_db
def test_progress_partial_polls_only_while_running(client):
    run = SweepRun.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1, 8]})
    SweepRunLevel.objects.create(run=run, conc=1, requests=12, done=5)
    SweepRunLevel.objects.create(run=run, conc=8, requests=24)
    partial = client.get(f"/sim/runs/{run.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<section id="run-progress"')
    assert 'hx-trigger="every 1s"' in partial
    assert '<progress id="level-1" max="12" value="5">' in partial
    full = client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert '<meta http-equiv="refresh" content="2">' in full  # progress without JavaScript
    assert client.get("/sim/runs/999/").status_code == 404


@pytest.mark.django_db
def test_a_run_whose_worker_died_shows_as_failed_on_its_page(client):
    run = SweepRun.objects.create(server_url="http://127.0.0.1:8001/v1", params={"levels": [1]})
    page = client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert "Running…" in page  # a fresh heartbeat: still running
    SweepRun.objects.filter(pk=run.pk).update(heartbeat_at=run.heartbeat_at - STALE_AFTER * 2)
    page = client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert "Failed: The sweep stopped reporting" in page
    assert SweepRun.objects.get(pk=run.pk).state == SweepRun.State.FAILED

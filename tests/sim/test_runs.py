"""Real sweeps started from the browser, queued, and measured by a task worker against a real
(fast) practice server."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from felab_sim.models import Run, RunLevel
from felab_sim.runs import STALE_AFTER, give_lost_runs_a_task
from tests.sim.conftest import FAST
from tests.taskqueue import work_off_the_queue

START_URL = "/sim/runs/"


@pytest.mark.django_db
def test_anonymous_must_log_in(client):
    response = client.post(START_URL, {"levels": "1"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_student_runs_a_sweep_and_sees_it_over_the_model(student_client, student, practice_server):
    # An SLO no busy machine misses: the capacity below is then C = 2 however slow the run was.
    response = student_client.post(START_URL, {"levels": "1,2", "max_tokens": "16", "slo_ms": "600000"})
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/sim/runs/{run.pk}/"
    assert run.started_by == student and run.server_url == practice_server.api
    assert list(run.levels.values_list("conc", "requests")) == [(1, 12), (2, 12)]
    assert "Waiting in the queue: next" in student_client.get(f"/sim/runs/{run.pk}/").content.decode()

    work_off_the_queue()
    run.refresh_from_db()
    assert run.state == Run.State.DONE, run.error
    levels = list(run.levels.all())
    assert all(level.done == level.requests and level.is_finished for level in levels)
    # Measured speeds depend on how busy the machine is (this asserted > 100 tok/s per user and
    # failed under load at 88); what holds however busy it is: tokens came, and a level's
    # tokens took at least the server's 2 ms steps to make (C requests step together).
    for level in levels:
        assert level.user_tok_s > 0 and 0 < level.agg_tok_s <= level.conc * 1000 / FAST.step_ms

    page = student_client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert (
        "Done: capacity C = 2 at a 600,000 ms SLO" in page
        and 'id="run-figure"' in page
        and "hx-trigger" not in page
    )
    overlay = student_client.get("/sim/", {"levels": "1,2", "run": run.pk}).content.decode()
    assert f"per user (run {run.pk})" in overlay and "(drawn above)" in overlay


def running_run(user=None, **fields) -> Run:
    run = Run.objects.create(
        server_url="http://127.0.0.1:8001/v1", params={"levels": [1, 8, 16]}, started_by=user,
        state=Run.State.RUNNING, **fields,
    )  # fmt: skip
    for conc, requests in ((1, 12), (8, 24), (16, 48)):
        RunLevel.objects.create(run=run, conc=conc, requests=requests)
    return run


@pytest.mark.django_db
def test_a_second_user_waits_in_the_queue_with_a_place_and_an_estimate(
    student, student_client, other_student_client, other_student, monkeypatch
):
    # The clock stands still for this test: the page and the check below then compute the
    # estimate at the same instant (it once failed showing 51 s against 51.1 s a moment later).
    frozen = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: frozen)
    running_run(student, started_at=frozen - timedelta(seconds=3))
    response = other_student_client.post(START_URL, {"levels": "1,8,16"}, follow=True)
    waiting = Run.objects.get(started_by=other_student)
    assert waiting.state == Run.State.QUEUED
    assert response.redirect_chain[0] == (f"/sim/runs/{waiting.pk}/", 302)
    place, seconds = waiting.wait_estimate()
    # The model's wall time for levels 1, 8 and 16 against the practice server: about 30 s.
    assert place == 1 and 15 < seconds < 60
    page = response.content.decode()
    shown = re.search(r"Waiting in the queue: next, about (\d+) s until it starts\.", page)
    assert shown and int(shown[1]) == round(seconds)
    assert 'hx-trigger="every 1s"' in page  # it keeps polling while it waits
    assert "A sweep is running" in student_client.get("/sim/").content.decode()


@pytest.mark.django_db
def test_a_user_has_one_run_waiting_or_running_at_a_time(student, student_client):
    mine = running_run(student)
    response = student_client.post(START_URL, {"levels": "1"}, follow=True)
    assert response.redirect_chain[0] == (f"/sim/runs/{mine.pk}/", 302)
    assert "You already have a run waiting or running" in response.content.decode()
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_whoever_ran_last_goes_after_everyone_already_waiting(student, other_student):
    earlier = timezone.now() - timedelta(minutes=5)
    last = running_run(student, started_at=earlier)
    Run.objects.filter(pk=last.pk).update(state=Run.State.DONE)
    # The student queued again the moment their run ended, before the other student did.
    again = Run.objects.create(server_url=last.server_url, params={"levels": [1]}, started_by=student)
    other = Run.objects.create(
        server_url=last.server_url, params={"levels": [1]}, started_by=other_student,
        queued_at=again.queued_at + timedelta(seconds=1),
    )  # fmt: skip
    assert [run.pk for run in Run.objects.in_turn()] == [other.pk, again.pk]
    assert other.wait_estimate()[0] == 1 and again.wait_estimate()[0] == 2
    assert not again.take_turn("a worker")  # not next in turn
    assert other.take_turn("a worker") and other.is_running and other.worker == "a worker"
    # One run at a time: nothing else measures while the other student's run does.
    assert not again.take_turn("another worker")
    assert Run.objects.get(pk=again.pk).is_queued


@pytest.mark.django_db
def test_alone_in_the_queue_the_last_user_runs_again(student):
    last = running_run(student, started_at=timezone.now() - timedelta(minutes=5))
    Run.objects.filter(pk=last.pk).update(state=Run.State.DONE)
    again = Run.objects.create(server_url=last.server_url, params={"levels": [1]}, started_by=student)
    assert again.take_turn("a worker")


@pytest.mark.django_db(transaction=True)
def test_a_waiting_run_defers_its_task_instead_of_holding_the_worker(
    student, other_student, other_student_client, practice_server
):
    running_run(student)
    other_student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
    waiting = Run.objects.get(started_by=other_student)
    work_off_the_queue()  # it returns: no task sleeps while another run measures
    assert Run.objects.get(pk=waiting.pk).is_queued
    first, again = DBTaskResult.objects.order_by("enqueued_at", "id")
    assert first.status == TaskResultStatus.SUCCESSFUL and first.return_value == "waiting for its turn"
    assert again.status == TaskResultStatus.READY and again.args_kwargs["args"] == [waiting.pk]
    assert again.run_after > first.finished_at

    # The measuring run ends; once due, the deferred task takes the turn and measures.
    Run.objects.running().update(state=Run.State.DONE)
    DBTaskResult.objects.filter(pk=again.pk).update(run_after=timezone.now())
    work_off_the_queue()
    waiting.refresh_from_db()
    assert waiting.state == Run.State.DONE, waiting.error
    assert DBTaskResult.objects.get(pk=again.pk).return_value == "done"


def due_now() -> None:
    """The deferred tasks, due at once (instead of TURN_CHECK_EVERY from when they deferred)."""
    DBTaskResult.objects.filter(status=TaskResultStatus.READY).update(run_after=timezone.now())


@pytest.mark.django_db(transaction=True)
def test_a_waiting_run_whose_task_is_gone_gets_another_and_keeps_its_place(
    student, other_student, other_student_client, practice_server
):
    # First in line and without a task, as when its worker died while the task looked for its turn.
    lost = Run.objects.create(
        server_url=practice_server.api, params={"levels": [1], "max_tokens": 4}, started_by=student
    )
    RunLevel.objects.create(run=lost, conc=1, requests=12)
    other_student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
    later = Run.objects.get(started_by=other_student)
    work_off_the_queue()
    due_now()
    work_off_the_queue()
    lost.refresh_from_db()
    later.refresh_from_db()
    assert lost.state == later.state == Run.State.DONE, (lost.error, later.error)
    assert lost.started_at < later.started_at


@pytest.mark.django_db(transaction=True)
def test_a_task_its_run_no_longer_names_ends_without_measuring(student_client, practice_server):
    student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
    run = Run.objects.get()
    first = run.task_id
    give_lost_runs_a_task()  # its task is there: nothing to do
    assert DBTaskResult.objects.count() == 1
    Run.objects.filter(pk=run.pk).update(task_id="")  # as if its task were lost
    give_lost_runs_a_task()
    run.refresh_from_db()
    assert run.task_id not in ("", first) and DBTaskResult.objects.count() == 2
    work_off_the_queue()
    assert DBTaskResult.objects.get(pk=first).return_value == "superseded"
    assert DBTaskResult.objects.get(pk=run.task_id).return_value == "done"
    assert Run.objects.get(pk=run.pk).state == Run.State.DONE


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_worker_died_does_not_block_the_queue(student, student_client, practice_server):
    dead = running_run(heartbeat_at=timezone.now() - STALE_AFTER * 2)
    student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
    work_off_the_queue()
    run = Run.objects.get(started_by=student)
    assert run.state == Run.State.DONE, run.error
    dead.refresh_from_db()
    assert dead.state == Run.State.FAILED and "stopped reporting" in dead.error


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
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_server_fails_the_run_with_a_message(student_client, settings):
    settings.PRACTICE_SERVER_URL = "http://127.0.0.1:9/v1"
    student_client.post(START_URL, {"levels": "1"})
    work_off_the_queue()
    run = Run.objects.get()
    assert run.state == Run.State.FAILED and "is the server running?" in run.error
    assert "Failed: " in Client().get(f"/sim/runs/{run.pk}/").content.decode()


@pytest.mark.django_db
def test_progress_partial_polls_only_while_running(client):
    run = Run.objects.create(
        server_url="http://127.0.0.1:8001/v1", params={"levels": [1, 8]}, state=Run.State.RUNNING
    )
    RunLevel.objects.create(run=run, conc=1, requests=12, done=5)
    RunLevel.objects.create(run=run, conc=8, requests=24)
    partial = client.get(f"/sim/runs/{run.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<section id="run-progress"')
    assert 'hx-trigger="every 1s"' in partial
    assert '<progress id="level-1" max="12" value="5">' in partial
    full = client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert '<meta http-equiv="refresh" content="2">' in full  # progress without JavaScript
    assert client.get("/sim/runs/999/").status_code == 404


@pytest.mark.django_db
def test_a_run_whose_worker_died_shows_as_failed_on_its_page(client):
    run = Run.objects.create(
        server_url="http://127.0.0.1:8001/v1", params={"levels": [1]}, state=Run.State.RUNNING
    )
    page = client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert "Running…" in page  # a fresh heartbeat: still running
    Run.objects.filter(pk=run.pk).update(heartbeat_at=run.heartbeat_at - STALE_AFTER * 2)
    page = client.get(f"/sim/runs/{run.pk}/").content.decode()
    assert "Failed: The run stopped reporting" in page
    assert Run.objects.get(pk=run.pk).state == Run.State.FAILED


@pytest.mark.django_db
def test_sim_lists_the_queue_and_the_five_newest_measured_sweeps(student_client):
    start = timezone.now() - timedelta(hours=1)

    def run(state, minutes, kind=Run.Kind.SWEEP):
        return Run.objects.create(
            server_url="http://127.0.0.1:8001/v1", params={"levels": [1, 8]}, started_by=None,
            state=state, kind=kind, queued_at=start + timedelta(minutes=minutes),
        )  # fmt: skip

    done = [run(Run.State.DONE, minutes) for minutes in range(7)]
    newest_prefix_run = run(Run.State.DONE, 30, kind=Run.Kind.PREFIX_CACHE)  # not a sweep: not listed
    run(Run.State.RUNNING, 40)
    run(Run.State.QUEUED, 41)
    run(Run.State.QUEUED, 42)
    run(Run.State.FAILED, 43)

    page = student_client.get("/sim/").content.decode()
    assert "A sweep is running" in page and "and 2 wait after it" in page
    listed = [int(pk) for pk in re.findall(r'<li><a href="/sim/runs/(\d+)/">Run', page)]
    assert listed == [item.pk for item in reversed(done[2:])]
    assert newest_prefix_run.pk not in listed

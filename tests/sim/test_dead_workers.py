"""A task worker killed mid-run, even by SIGKILL (no clean-up runs), neither keeps its run
"running" forever nor holds the practice server and its owner's place in line: the next run's
task, in another worker, sees the process is gone and fails its run and its task row, without
anyone opening a page."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from felab_sim.engine.sweep.sweep_params import ServerParams
from felab_sim.models import Run
from felab_sim.processes import is_alive, process_name
from felab_sim.runs import STALE_AFTER, WORKER_DIED, reap_dead_runs
from tests.practice.conftest import serving
from tests.sim.conftest import FAST
from tests.sim.test_runs import START_URL, running_run

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The test database, for worker processes of their own."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    user = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    return f"postgresql://{user}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def db_worker(*flags: str) -> Iterator[subprocess.Popen]:
    """`manage.py db_worker` in a process of its own, on the test database."""
    env = {**os.environ, "DATABASE_URL": database_url()}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    process = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1",
         "--verbosity", "0", *flags],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def until(condition: Callable[[], bool], what: str, within_s: float = 60.0) -> None:
    """Poll the database until ``condition`` holds: a bound on another process's work, which
    takes what it takes on a busy machine, not a guess at how long it takes."""
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, f"not within {within_s:.0f} s: {what}"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_by_sigkill_has_its_run_failed_by_the_next_and_its_owner_starts_again(
    student, student_client, other_student, other_student_client, settings
):
    # A slow server keeps the first run measuring while its worker is killed.
    with serving(ServerParams(step_ms=500.0)) as slow, serving(FAST) as fast:
        settings.PRACTICE_SERVER_URL = slow.api
        student_client.post(START_URL, {"levels": "1", "max_tokens": "64"})
        run = Run.objects.get()
        with db_worker() as killed:
            until(lambda: Run.objects.get(pk=run.pk).is_running, "the first worker takes the run")
            killed.send_signal(signal.SIGKILL)
            killed.wait(timeout=30)
        run.refresh_from_db()
        task = DBTaskResult.objects.get()
        assert run.is_running and task.status == TaskResultStatus.RUNNING  # nothing cleaned up

        # Another student's run waits behind it; a live worker, beside which nobody opens a
        # page, fails the dead worker's run and task row and measures the waiting one.
        settings.PRACTICE_SERVER_URL = fast.api
        other_student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
        waiting = Run.objects.get(started_by=other_student)
        with db_worker():
            until(lambda: Run.objects.get(pk=run.pk).state == Run.State.FAILED, "the run fails")
            run.refresh_from_db()
            assert run.error == WORKER_DIED
            until(
                lambda: DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.FAILED,
                "its task row fails",
            )
            until(
                lambda: Run.objects.get(pk=waiting.pk).state == Run.State.DONE,
                "the waiting run is done",
            )

            # Its owner starts again, and is sent to the new run, which the live worker measures.
            response = student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
            again = Run.objects.filter(started_by=student).exclude(pk=run.pk).get()
            assert response["Location"] == f"/sim/runs/{again.pk}/"
            until(lambda: Run.objects.get(pk=again.pk).state == Run.State.DONE, "the new run is done")


@contextmanager
def a_process() -> Iterator[subprocess.Popen]:
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def reaped(worker: str, heartbeat_age=STALE_AFTER * 0) -> bool:
    """Whether reap_dead_runs fails a running run of ``worker`` (one runs at a time: each
    run is finished before the next)."""
    run = running_run(worker=worker, heartbeat_at=timezone.now() - heartbeat_age)
    count = reap_dead_runs()
    run.refresh_from_db()
    assert count == (run.state == Run.State.FAILED)
    Run.objects.filter(pk=run.pk).update(state=Run.State.DONE)
    return run.state == Run.State.FAILED and run.error == WORKER_DIED


@pytest.mark.django_db
def test_a_run_is_failed_as_soon_as_its_workers_process_on_this_machine_is_gone():
    with a_process() as killed, a_process() as zombie:
        killed_name, zombie_name = process_name(killed.pid), process_name(zombie.pid)
        assert is_alive(killed_name) and is_alive(zombie_name)
        assert not reaped(killed_name)
        killed.kill()
        killed.wait()
        zombie.kill()  # and not waited for: a zombie until its parent does
        until(lambda: is_alive(zombie_name) is False, "the killed process is a zombie")
        assert reaped(killed_name) and reaped(zombie_name)
    assert not reaped(process_name())  # this test's own process
    # Another machine's worker is judged by its run's heartbeat alone.
    assert not reaped("another-host/12345678/42/7")
    assert reaped("another-host/12345678/42/7", heartbeat_age=STALE_AFTER * 2)


@pytest.mark.django_db
def test_the_owner_of_a_run_whose_worker_died_starts_a_new_one_before_any_worker_looks(
    student, student_client
):
    with a_process() as killed:
        name = process_name(killed.pid)
    dead = running_run(student, worker=name)
    response = student_client.post(START_URL, {"levels": "1", "max_tokens": "4"})
    again = Run.objects.exclude(pk=dead.pk).get()
    assert response["Location"] == f"/sim/runs/{again.pk}/" and again.is_queued
    assert Run.objects.get(pk=dead.pk).state == Run.State.FAILED


def test_a_name_from_another_machine_or_boot_is_not_judged_here():
    pid = os.getpid()
    host, boot, _, start = process_name().split("/")
    assert is_alive(f"{host}/{boot}/{pid}/{start}") is True
    assert is_alive(f"other/{boot}/{pid}/{start}") is None
    assert is_alive(f"{host}/00000000/{pid}/{start}") is None
    assert is_alive(f"{host}/{boot}/{pid}/1") is False  # the pid, reused by a later process
    assert is_alive("test-worker") is None

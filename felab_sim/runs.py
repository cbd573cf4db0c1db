"""Real sweeps started from the browser: queued as SweepRuns, measured one at a time by a task
worker (`manage.py db_worker`, felab_sim/tasks.py), never inside a web process.

A web process only records the run and enqueues a task; any worker on any host takes the
next run in turn (SweepRunQuerySet.in_turn), so a run survives the web worker that accepted
it. The sweep itself is felab_sim.loadgen (asyncio, no Django). It runs in a thread of its
own; the worker's thread copies its progress into the database twice a second, because
Django's ORM refuses to be called from inside a running event loop.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.utils import timezone

from .core.model import ParamError, SweepParams, SweepResult, requests_at_level
from .loadgen import LoadgenError, run_real_sweep
from .models import SweepRun, SweepRunLevel

log = logging.getLogger(__name__)

FLUSH_EVERY_S = 0.5
# A run whose thread has not written for this long died with its process (a restart).
STALE_AFTER = timedelta(seconds=60)


@dataclass(frozen=True)
class BrowserLimits:
    """Real sweeps take real time on a shared machine: keep the ones a page can start short."""

    max_level: int = 64
    max_requests: int = 400
    max_tokens: int = 256

    def check(self, params: SweepParams) -> None:
        if max(params.levels) > self.max_level:
            raise ParamError("levels", f"levels: a sweep from the browser goes up to C = {self.max_level}")
        if params.max_tokens > self.max_tokens:
            raise ParamError(
                "max_tokens", f"max_tokens: a sweep from the browser allows at most {self.max_tokens}"
            )
        total = sum(requests_at_level(conc) for conc in params.levels)
        if total > self.max_requests:
            raise ParamError(
                "levels",
                f"levels: this sweep sends {total} requests; a sweep from the browser sends at most "
                f"{self.max_requests} (run `manage.py sweep --url` for more)",
            )


BROWSER_LIMITS = BrowserLimits()


class AlreadyWaiting(Exception):
    """The user already has a run waiting or running: that is the one to watch."""

    def __init__(self, run: SweepRun | None) -> None:
        super().__init__("this user already has a sweep waiting or running")
        self.run = run


def reap_stale_runs() -> int:
    """Mark runs whose worker stopped writing as failed, so the queue moves on."""
    cutoff = timezone.now() - STALE_AFTER
    return (
        SweepRun.objects.running()
        .filter(heartbeat_at__lt=cutoff)
        .update(
            state=SweepRun.State.FAILED,
            error="The sweep stopped reporting (its worker process ended); start it again.",
            finished_at=timezone.now(),
        )
    )


def start_run(
    params: SweepParams, user: AbstractBaseUser | AnonymousUser, server_url: str | None = None
) -> SweepRun:
    """Queue a new run for the task workers; AlreadyWaiting if this user has one queued or running."""
    from .tasks import run_queued_sweeps  # tasks imports this module

    BROWSER_LIMITS.check(params)
    url = server_url or settings.PRACTICE_SERVER_URL
    starter = user if user.is_authenticated else None
    try:
        with transaction.atomic():
            run = SweepRun.objects.create(server_url=url, params=params.as_flat(), started_by=starter)
            SweepRunLevel.objects.bulk_create(
                SweepRunLevel(run=run, conc=conc, requests=requests_at_level(conc)) for conc in params.levels
            )
    except IntegrityError:
        raise AlreadyWaiting(SweepRun.objects.active().filter(started_by=starter).first()) from None
    transaction.on_commit(run_queued_sweeps.enqueue)
    return run


def claim_next_run() -> SweepRun | None:
    """Take the next run in turn from the queue; None if there is none or another run holds the slot."""
    reap_stale_runs()
    waiting = SweepRun.objects.in_turn()
    if not waiting:
        return None
    now = timezone.now()
    try:
        with transaction.atomic():
            claimed = (
                SweepRun.objects.queued()
                .filter(pk=waiting[0].pk)
                .update(state=SweepRun.State.RUNNING, started_at=now, heartbeat_at=now)
            )
    except IntegrityError:  # one_sweep_running_at_a_time: another worker's run is measuring
        return None
    return SweepRun.objects.get(pk=waiting[0].pk) if claimed else None


def work_through_queue(poll_s: float = 1.0) -> int:
    """Run queued sweeps one after another until none waits; returns how many this call ran.

    While another worker's run holds the slot, wait for it rather than return: if that worker
    died, its run is reaped after STALE_AFTER and this one carries on with the queue.
    """
    ran = 0
    while True:
        run = claim_next_run()
        if run is not None:
            execute_run(run.pk)
            ran += 1
        elif SweepRun.objects.queued().exists():
            time.sleep(poll_s)
        else:
            return ran


def execute_run(run_pk: int) -> None:
    """Measure a recorded run to the end, keeping its progress and result in the database."""
    close_old_connections()
    try:
        run = SweepRun.objects.get(pk=run_pk)
        result = _measure(run)
        _store_result(run, result)
    except LoadgenError as error:
        _fail(run_pk, str(error))
    except Exception:
        log.exception("sweep run %s failed", run_pk)
        _fail(run_pk, "The sweep failed unexpectedly; the server log has the details.")
    finally:
        connection.close()


def _measure(run: SweepRun) -> SweepResult:
    progress: dict[int, int] = {}
    outcome: dict[str, object] = {}

    def on_progress(level_index: int, conc: int, done: int, total: int) -> None:
        progress[conc] = done  # a plain dict write: safe across threads under the GIL

    def sweep() -> None:
        try:
            outcome["result"] = run_real_sweep(run.server_url, run.sweep_params(), on_progress=on_progress)
        except BaseException as error:  # handed to the thread that owns the database
            outcome["error"] = error

    worker = threading.Thread(target=sweep, name=f"sweep-run-{run.pk}-client", daemon=True)
    worker.start()
    written: dict[int, int] = {}
    while worker.is_alive():
        worker.join(FLUSH_EVERY_S)
        written = _flush(run, dict(progress), written)
    _flush(run, dict(progress), written)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def _flush(run: SweepRun, progress: dict[int, int], written: dict[int, int]) -> dict[int, int]:
    for conc, done in progress.items():
        if written.get(conc) != done:
            SweepRunLevel.objects.filter(run=run, conc=conc).update(done=done)
    SweepRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
    return progress


def _store_result(run: SweepRun, result: SweepResult) -> None:
    with transaction.atomic():
        for level in result.levels:
            SweepRunLevel.objects.filter(run=run, conc=level.conc).update(
                done=level.requests, **{name: getattr(level, name) for name in SweepRunLevel.METRICS}
            )
        SweepRun.objects.filter(pk=run.pk).update(
            state=SweepRun.State.DONE, capacity=result.capacity, finished_at=timezone.now()
        )


def _fail(run_pk: int, message: str) -> None:
    SweepRun.objects.filter(pk=run_pk).update(
        state=SweepRun.State.FAILED, error=message[:2000], finished_at=timezone.now()
    )

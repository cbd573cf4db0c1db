"""Real runs started from the browser: queued as SweepRuns, measured one at a time by a task
worker (`manage.py db_worker`, run_queued_sweeps below), never inside a web process. A run is lesson
03's sweep or lesson 06's prefix-cache run; both kinds share one queue and one slot, since two
runs timing the same practice server at once would each measure the other.

A web process only records the run and enqueues a task; any worker on any host takes the
next run in turn (SweepRunQuerySet.in_turn), so a run survives the web worker that accepted
it. The measuring itself is felab_sim.engine.loadgen (asyncio, no Django). It runs in a thread of its
own; the worker's thread copies its progress into the database twice a second, because
Django's ORM refuses to be called from inside a running event loop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks_db.models import DBTaskResult

from . import processes
from .engine.limits import BROWSER_LIMITS, PREFIX_CACHE_LIMITS
from .engine.loadgen import (
    LoadgenError,
    PrefixCacheRun,
    PrefixCacheSetup,
    run_prefix_cache,
    run_real_sweep,
)
from .engine.metrics import SweepResult
from .engine.prompts import requests_at_level
from .engine.sweep_params import SweepParams
from .models import PrefixCacheRunOrder, SweepRun, SweepRunLevel

log = logging.getLogger(__name__)

FLUSH_EVERY_S = 0.5
# A run whose worker has not written for this long died with its process, wherever it ran.
# With WATCH_EVERY_S, a run whose worker another machine killed fails within a minute.
STALE_AFTER = timedelta(seconds=30)
# How often each task worker looks for runs whose worker died (db_worker's watch thread): on
# its own machine it sees a killed process at once, elsewhere it waits for STALE_AFTER.
WATCH_EVERY_S = 10.0
WORKER_DIED = "The run stopped reporting (its worker process ended); start it again."

T = TypeVar("T")


def _setup_values(setup: PrefixCacheSetup) -> dict[str, int]:
    """A setup's settings besides its order: what a prefix-cache run stores and both orders share."""
    return {
        "prefix_chars": setup.prefix_chars,
        "suffix_chars": setup.suffix_chars,
        "requests": setup.requests,
        "max_tokens": setup.max_tokens,
    }


class AlreadyWaiting(Exception):
    """The user already has a run waiting or running: that is the one to watch."""

    def __init__(self, run: SweepRun | None) -> None:
        super().__init__("this user already has a run waiting or running")
        self.run = run


# Whose name an instructor may see is the learner app's rule (the student's consent, the
# Instructors group), and that app stands above this one: it hands its rule in at start-up
# (show_starters_by, from quiz's AppConfig.ready). Until then nobody but the owner sees a name.
StarterRule = Callable[[AbstractBaseUser, AbstractBaseUser], str]
_starter_rule: list[StarterRule] = [lambda owner, viewer: ""]


def show_starters_by(rule: StarterRule) -> None:
    """Install ``rule(owner, viewer)``: how a run's starter is named to a signed-in viewer other
    than the owner ("" for not at all)."""
    _starter_rule[0] = rule


def starter_shown_to(run: SweepRun, viewer: AbstractBaseUser | AnonymousUser) -> str:
    """Who started ``run``, as ``viewer`` may see it: "you" to its owner; to anyone else, what
    the installed rule allows (quiz's: an instructor sees the student's name only if they chose
    to share it, as on /instructor/); nothing to an anonymous visitor, since run pages are public
    and their numbers count up."""
    owner = run.started_by
    if owner is None or not viewer.is_authenticated:
        return ""
    if viewer.pk == owner.pk:
        return "you"
    return _starter_rule[0](owner, viewer)


def reap_dead_runs() -> int:
    """Fail the running runs whose worker died, freeing the slot and their owners' turn, and
    the task rows those workers held; returns how many runs failed.

    A worker is dead when this machine sees its process gone (at once, even after SIGKILL), or
    when its run has not written for STALE_AFTER (a worker on another machine).
    """
    now = timezone.now()
    running = SweepRun.objects.running().only("pk", "worker", "heartbeat_at")
    dead = [
        run
        for run in running
        if run.heartbeat_at < now - STALE_AFTER or processes.is_alive(run.worker) is False
    ]
    failed = (
        SweepRun.objects.running()
        .filter(pk__in=[run.pk for run in dead])
        .update(state=SweepRun.State.FAILED, error=WORKER_DIED, finished_at=now)
        if dead
        else 0
    )
    _fail_dead_workers_tasks({run.worker for run in dead if run.worker}, now)
    return failed


def _fail_dead_workers_tasks(dead_workers: set[str], now: datetime) -> None:
    """Task rows left RUNNING by a worker that died: failed, as the run it measured."""
    tasks = DBTaskResult.objects.running().only("id", "worker_ids")
    gone = [
        task.id
        for task in tasks
        if task.worker_ids
        and (task.worker_ids[-1] in dead_workers or processes.is_alive(task.worker_ids[-1]) is False)
    ]
    if gone:
        DBTaskResult.objects.running().filter(id__in=gone).update(
            status=TaskResultStatus.FAILED,
            finished_at=now,
            exception_class_path="felab_sim.runs.WorkerDied",
            traceback=f"{WORKER_DIED}\n",
        )


def watch_runs(stop: threading.Event, every_s: float = WATCH_EVERY_S) -> None:
    """What each task worker does beside its tasks until ``stop`` is set: fail the runs of
    workers that died, so the queue moves on without anyone opening a page."""
    while not stop.wait(every_s):
        try:
            reap_dead_runs()
        except Exception:  # a locked or lost database: try again at the next look
            log.exception("looking for runs whose worker died failed")
        finally:
            connection.close()


def start_run(
    params: SweepParams, user: AbstractBaseUser | AnonymousUser, server_url: str | None = None
) -> SweepRun:
    """Queue a new sweep for the task workers; AlreadyWaiting if this user has a run queued or running."""
    BROWSER_LIMITS.check(params)

    def levels(run: SweepRun) -> None:
        SweepRunLevel.objects.bulk_create(
            SweepRunLevel(run=run, conc=conc, requests=requests_at_level(conc)) for conc in params.levels
        )

    return _queue(SweepRun.Kind.SWEEP, params.as_flat(), levels, user, server_url)


def start_prefix_cache_run(
    setup: PrefixCacheSetup, user: AbstractBaseUser | AnonymousUser, server_url: str | None = None
) -> SweepRun:
    """Queue a prefix-cache run of ``setup``'s settings in both orders (``setup.order`` plays no
    part); AlreadyWaiting if this user has a run queued or running."""
    PREFIX_CACHE_LIMITS.check(setup)

    def orders(run: SweepRun) -> None:
        PrefixCacheRunOrder.objects.bulk_create(
            PrefixCacheRunOrder(run=run, order=half.order, requests=half.requests)
            for half in run.prefix_setups()
        )

    return _queue(SweepRun.Kind.PREFIX_CACHE, _setup_values(setup), orders, user, server_url)


def _queue(
    kind: str,
    params: dict,
    add_parts: Callable[[SweepRun], None],
    user: AbstractBaseUser | AnonymousUser,
    server_url: str | None,
) -> SweepRun:
    url = server_url or settings.PRACTICE_SERVER_URL
    starter = user if user.is_authenticated else None
    try:
        with transaction.atomic():
            run = SweepRun.objects.create(kind=kind, server_url=url, params=params, started_by=starter)
            add_parts(run)
    except IntegrityError:
        # The user's earlier run may be one whose worker died and no worker has looked yet.
        if not reap_dead_runs():
            raise AlreadyWaiting(SweepRun.objects.active().filter(started_by=starter).first()) from None
        return _queue(kind, params, add_parts, user, server_url)
    transaction.on_commit(run_queued_sweeps.enqueue)
    return run


def claim_next_run() -> SweepRun | None:
    """Take the next run in turn from the queue; None if there is none or another run holds the slot."""
    reap_dead_runs()
    waiting = SweepRun.objects.in_turn()
    if not waiting:
        return None
    now = timezone.now()
    try:
        with transaction.atomic():
            claimed = (
                SweepRun.objects.queued()
                .filter(pk=waiting[0].pk)
                .update(
                    state=SweepRun.State.RUNNING,
                    started_at=now,
                    heartbeat_at=now,
                    worker=processes.process_name(),
                )
            )
    except IntegrityError:  # one_sweep_running_at_a_time: another worker's run is measuring
        return None
    return SweepRun.objects.get(pk=waiting[0].pk) if claimed else None


@task()
def run_queued_sweeps() -> int:
    """The task a task worker runs: measure the queued runs (sweeps and prefix-cache runs), one
    at a time; enqueued once per run started. It lives beside the queue it drains, so that
    enqueuing and draining need no import circle."""
    return work_through_queue()


def work_through_queue(poll_s: float = 1.0) -> int:
    """Run queued runs one after another until none waits; returns how many this call ran.

    While another worker's run holds the slot, wait for it rather than return: if that worker
    died, its run is failed (reap_dead_runs) and this one carries on with the queue.
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
        if run.is_prefix_cache:
            _store_prefix_cache(run, _measure_prefix_cache(run))
        else:
            _store_result(run, _measure(run))
    except LoadgenError as error:
        _fail(run_pk, str(error))
    except Exception:
        log.exception("run %s failed", run_pk)
        _fail(run_pk, "The run failed unexpectedly; the server log has the details.")
    finally:
        connection.close()


def _in_thread_with_progress(run: SweepRun, measure: Callable[[], T], flush: Callable[[], None]) -> T:
    """``measure()`` in a thread of its own, calling ``flush()`` here (where the database may be
    used) every FLUSH_EVERY_S while it runs and once when it ends; its result, or its error."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = measure()
        except BaseException as error:  # handed to the thread that owns the database
            outcome["error"] = error

    worker = threading.Thread(target=target, name=f"run-{run.pk}-client", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(FLUSH_EVERY_S)
        flush()
    flush()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def _measure(run: SweepRun) -> SweepResult:
    progress: dict[int, int] = {}
    written: dict[int, int] = {}

    def on_progress(level_index: int, conc: int, done: int, total: int) -> None:
        progress[conc] = done  # a plain dict write: safe across threads under the GIL

    def flush() -> None:
        nonlocal written
        written = _flush(run, dict(progress), written)

    return _in_thread_with_progress(
        run, lambda: run_real_sweep(run.server_url, run.sweep_params(), on_progress=on_progress), flush
    )


def _measure_prefix_cache(run: SweepRun) -> list[PrefixCacheRun]:
    """Both orders, one after the other, each with a shared part no earlier request sent."""
    progress: dict[str, int] = {}
    written: dict[str, int] = {}

    def measure() -> list[PrefixCacheRun]:
        measured = []
        for setup in run.prefix_setups():

            def on_request(k: int, n: int, order: str = setup.order) -> None:
                progress[order] = k  # a plain dict write: safe across threads under the GIL

            measured.append(run_prefix_cache(run.server_url, setup, on_request=on_request))
        return measured

    def flush() -> None:
        nonlocal written
        now = dict(progress)
        for order, done in now.items():
            if written.get(order) != done:
                PrefixCacheRunOrder.objects.filter(run=run, order=order).update(done=done)
        SweepRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
        written = now

    return _in_thread_with_progress(run, measure, flush)


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


def _store_prefix_cache(run: SweepRun, measured: list[PrefixCacheRun]) -> None:
    with transaction.atomic():
        for half in measured:
            data = half.as_dict()
            PrefixCacheRunOrder.objects.filter(run=run, order=half.setup.order).update(
                done=len(half.requests),
                prompt_tokens=half.prompt_tokens,
                cached_tokens=half.cached_tokens,
                ttft_cold_ms=half.ttft_cold_ms,
                ttft_warm_ms=half.ttft_warm_ms,
                measured_requests=data["requests"],
            )
        SweepRun.objects.filter(pk=run.pk).update(state=SweepRun.State.DONE, finished_at=timezone.now())


def _fail(run_pk: int, message: str) -> None:
    SweepRun.objects.filter(pk=run_pk).update(
        state=SweepRun.State.FAILED, error=message[:2000], finished_at=timezone.now()
    )

"""Real runs started from the browser: recorded as Run rows and measured by a task worker
(`manage.py db_worker`), never inside a web process. A run is lesson 03's sweep or lesson 06's
prefix-cache run; both kinds wait their turn in one line, since two runs timing the same
practice server at once would each measure the other.

A web process records the run and enqueues its one task (measure_run, given the run's id); any
worker on any host may take it, so a run survives the web worker that accepted it. The order of
turns is the database's (RunQuerySet.in_turn), and so are the rules: one run measuring at a
time and one waiting or running run per user are unique constraints on Run, which a
task that is not next defers itself around (django-tasks' run_after) instead of waiting.

The measuring itself is felab_sim.engine.sweep.loadgen and felab_sim.engine.sweep.prefix_cache_run
(asyncio, no Django). It runs in a thread of its own; the worker's thread copies its progress into
the database twice a second, because Django's ORM refuses to be called from inside a running event
loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar
from uuid import UUID

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.utils import timezone
from django_tasks import TaskContext, TaskResultStatus, task
from django_tasks_db.models import DBTaskResult

from . import processes
from .engine.sweep.limits import BROWSER_LIMITS, PREFIX_CACHE_LIMITS
from .engine.sweep.loadgen import LoadgenError, run_real_sweep
from .engine.sweep.metrics import SweepResult
from .engine.sweep.prefix_cache_run import PrefixCacheRun, PrefixCacheSetup, run_prefix_cache
from .engine.sweep.prompts import requests_at_level
from .engine.sweep.sweep_params import SweepParams
from .models import PrefixCacheRunOrder, Run, RunLevel, RunQuerySet

log = logging.getLogger(__name__)

FLUSH_EVERY_S = 0.5
# A run whose worker has not written for this long died with its process, wherever it ran.
STALE_AFTER = timedelta(seconds=30)
# How soon a waiting run's task looks again for its turn. A worker busy measuring takes no
# task meanwhile, so the tasks of waiting runs cost a row each this often only while another
# worker is idle; the next run starts at most this long after the one before ends.
TURN_CHECK_EVERY = timedelta(seconds=1)
WORKER_DIED = "The run stopped reporting (its worker process ended); start it again."
# A task waiting this long while none runs means no worker is taking tasks.
QUEUE_STALLED_AFTER = timedelta(minutes=10)

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

    def __init__(self, run: Run | None) -> None:
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


def starter_shown_to(run: Run, viewer: AbstractBaseUser | AnonymousUser) -> str:
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
    """Fail the running runs whose worker died, freeing the practice server and their owners'
    place in line, and the task rows those workers held; returns how many runs failed.

    A worker is dead when this machine sees its process gone (at once, even after SIGKILL), or
    when its run has not written for STALE_AFTER (a worker on another machine).
    """
    now = timezone.now()
    running = Run.objects.running().only("pk", "worker", "heartbeat_at")
    dead = [
        run
        for run in running
        if run.heartbeat_at < now - STALE_AFTER or processes.is_alive(run.worker) is False
    ]
    failed = (
        Run.objects.running()
        .filter(pk__in=[run.pk for run in dead])
        .update(state=Run.State.FAILED, error=WORKER_DIED, finished_at=now)
        if dead
        else 0
    )
    _fail_dead_workers_tasks({run.worker for run in dead if run.worker}, now)
    give_lost_runs_a_task()
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


def give_lost_runs_a_task(runs: RunQuerySet | None = None) -> None:
    """A waiting run (of ``runs``, all by default) whose task is gone gets a new one: its worker
    died while the task looked for its turn, or the run was recorded before runs had a task
    each. Without one it would stand first in line for ever, every run behind it deferring."""
    waiting = dict((runs if runs is not None else Run.objects.all()).queued().values_list("pk", "task_id"))
    alive = {
        str(task_id)
        for task_id in DBTaskResult.objects.filter(
            id__in=[task_id for task_id in waiting.values() if _is_uuid(task_id)],
            status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
        ).values_list("id", flat=True)
    }
    for run_pk, task_id in waiting.items():
        if task_id not in alive:
            _enqueue(run_pk)


def queue_readiness() -> dict[str, Any]:
    """/readyz's queue check: the tasks waiting, whether one runs, and whether a worker takes them."""
    waiting = DBTaskResult.objects.ready()
    oldest = waiting.order_by("enqueued_at").values_list("enqueued_at", flat=True).first()
    running = DBTaskResult.objects.running().exists()
    waited = (timezone.now() - oldest) if oldest else timedelta(0)
    stalled = not running and waited > QUEUE_STALLED_AFTER
    return {
        "ok": not stalled,
        "waiting": waiting.count(),
        "running": running,
        "oldest_wait_s": round(waited.total_seconds()),
        **({"error": "tasks wait and none runs: is a worker (make worker) up?"} if stalled else {}),
    }


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def _enqueue(run_pk: int, after: datetime | None = None) -> None:
    """Enqueue the run's task and name it on the run, in one transaction: the run's task is the
    one it names, so a task superseded by a newer one for the same run ends without measuring.
    django-tasks-db writes the task row in this database, so both commit or neither does."""
    task = measure_run if after is None else measure_run.using(run_after=after)
    with transaction.atomic():
        result = task.enqueue(run_pk)
        Run.objects.filter(pk=run_pk).update(task_id=str(result.id))


def start_run(
    params: SweepParams, user: AbstractBaseUser | AnonymousUser, server_url: str | None = None
) -> Run:
    """Record a new sweep and enqueue its task; AlreadyWaiting if this user has a run queued or running."""
    BROWSER_LIMITS.check(params)

    def levels(run: Run) -> None:
        RunLevel.objects.bulk_create(
            RunLevel(run=run, conc=conc, requests=requests_at_level(conc)) for conc in params.levels
        )

    return _record(Run.Kind.SWEEP, params.as_flat(), levels, user, server_url)


def start_prefix_cache_run(
    setup: PrefixCacheSetup, user: AbstractBaseUser | AnonymousUser, server_url: str | None = None
) -> Run:
    """Record a prefix-cache run of ``setup``'s settings in both orders (``setup.order`` plays no
    part); AlreadyWaiting if this user has a run queued or running."""
    PREFIX_CACHE_LIMITS.check(setup)

    def orders(run: Run) -> None:
        PrefixCacheRunOrder.objects.bulk_create(
            PrefixCacheRunOrder(run=run, order=half.order, requests=half.requests)
            for half in run.prefix_setups()
        )

    return _record(Run.Kind.PREFIX_CACHE, _setup_values(setup), orders, user, server_url)


def _record(
    kind: str,
    params: dict,
    add_parts: Callable[[Run], None],
    user: AbstractBaseUser | AnonymousUser,
    server_url: str | None,
) -> Run:
    url = server_url or settings.PRACTICE_SERVER_URL
    starter = user if user.is_authenticated else None
    try:
        with transaction.atomic():
            run = Run.objects.create(kind=kind, server_url=url, params=params, started_by=starter)
            add_parts(run)
            _enqueue(run.pk)
    except IntegrityError:
        # The user's earlier run may be one whose worker died and no worker has looked yet.
        if not reap_dead_runs():
            raise AlreadyWaiting(Run.objects.active().filter(started_by=starter).first()) from None
        return _record(kind, params, add_parts, user, server_url)
    run.refresh_from_db(fields=["task_id"])
    return run


@task(takes_context=True)
def measure_run(context: TaskContext, run_pk: int) -> str:
    """The task of one run, enqueued with it: measure it when its turn comes.

    A run that is not next in turn, or finds another run measuring, enqueues its task again
    for TURN_CHECK_EVERY later and ends, so a worker is never held by a run that waits. Before
    looking, it fails the runs whose worker died (reap_dead_runs): a killed worker's run frees
    the practice server for the next as soon as the next one's task looks.
    """
    reap_dead_runs()
    run = Run.objects.filter(pk=run_pk).first()
    if run is None or not run.is_queued:
        return "not waiting"
    if run.task_id != str(context.task_result.id):
        return "superseded"
    if not run.take_turn(processes.process_name()):
        _enqueue(run_pk, after=timezone.now() + TURN_CHECK_EVERY)
        return "waiting for its turn"
    execute_run(run_pk)
    return Run.objects.get(pk=run_pk).state


def execute_run(run_pk: int) -> None:
    """Measure a recorded run to the end, keeping its progress and result in the database."""
    close_old_connections()
    try:
        run = Run.objects.get(pk=run_pk)
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


def _in_thread_with_progress(run: Run, measure: Callable[[], T], flush: Callable[[], None]) -> T:
    """``measure()`` in a thread of its own, calling ``flush()`` here (where the database may be
    used) every FLUSH_EVERY_S while it runs and once when it ends; its result, or its error."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = measure()
        except BaseException as error:  # handed to the thread that owns the database
            outcome["error"] = error

    client = threading.Thread(target=target, name=f"run-{run.pk}-client", daemon=True)
    client.start()
    while client.is_alive():
        client.join(FLUSH_EVERY_S)
        flush()
    flush()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def _measure(run: Run) -> SweepResult:
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


def _measure_prefix_cache(run: Run) -> list[PrefixCacheRun]:
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
        Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
        written = now

    return _in_thread_with_progress(run, measure, flush)


def _flush(run: Run, progress: dict[int, int], written: dict[int, int]) -> dict[int, int]:
    for conc, done in progress.items():
        if written.get(conc) != done:
            RunLevel.objects.filter(run=run, conc=conc).update(done=done)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
    return progress


def _store_result(run: Run, result: SweepResult) -> None:
    with transaction.atomic():
        for level in result.levels:
            RunLevel.objects.filter(run=run, conc=level.conc).update(
                done=level.requests, **{name: getattr(level, name) for name in RunLevel.METRICS}
            )
        Run.objects.filter(pk=run.pk).update(
            state=Run.State.DONE, capacity=result.capacity, finished_at=timezone.now()
        )


def _store_prefix_cache(run: Run, measured: list[PrefixCacheRun]) -> None:
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
        Run.objects.filter(pk=run.pk).update(state=Run.State.DONE, finished_at=timezone.now())


def _fail(run_pk: int, message: str) -> None:
    Run.objects.filter(pk=run_pk).update(
        state=Run.State.FAILED, error=message[:2000], finished_at=timezone.now()
    )

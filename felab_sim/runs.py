"""Real sweeps started from the browser: one at a time for the whole site, kept as SweepRuns.

The sweep itself is felab_sim.loadgen (asyncio, no Django). It runs in a thread of its own;
the thread that started it copies its progress into the database twice a second, because
Django's ORM refuses to be called from inside a running event loop.
"""

from __future__ import annotations

import logging
import threading
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


class SweepBusy(Exception):
    """Another sweep is running; it is the one to wait for."""

    def __init__(self, running: SweepRun | None) -> None:
        super().__init__("a sweep is already running")
        self.running = running


def reap_stale_runs() -> int:
    """Mark runs whose worker stopped writing as failed, so the site is not blocked forever."""
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
    """Record a new run and start measuring it in the background; SweepBusy if one is running."""
    BROWSER_LIMITS.check(params)
    reap_stale_runs()
    url = server_url or settings.PRACTICE_SERVER_URL
    try:
        with transaction.atomic():
            run = SweepRun.objects.create(
                server_url=url,
                params=params.as_flat(),
                started_by=user if user.is_authenticated else None,
            )
            SweepRunLevel.objects.bulk_create(
                SweepRunLevel(run=run, conc=conc, requests=requests_at_level(conc)) for conc in params.levels
            )
    except IntegrityError:
        raise SweepBusy(SweepRun.objects.running().select_related("started_by").first()) from None
    transaction.on_commit(lambda: _launch(run.pk))
    return run


def _launch(run_pk: int) -> None:
    threading.Thread(target=execute_run, args=(run_pk,), name=f"sweep-run-{run_pk}", daemon=True).start()


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

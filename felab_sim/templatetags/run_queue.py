"""The run queue that /sim/ shows every visitor. Runs start and end between content changes, so
/sim/ keeps what it shows of the queue ({% kept_while "runs" %}) only while no run is written
(felab_sim.models.RUNS), and reads it again after each write."""

from dataclasses import dataclass

from django import template
from django.db.models import Q

from serving.prepared import PreparedQuery

from ..models import Run

register = template.Library()


@dataclass(frozen=True)
class RunQueue:
    running: Run | None
    waiting: int
    recent: list[Run]  # the last sweeps measured


RECENT_RUNS = 5


def _queue_rows():
    # The runs waiting or measuring, and the last sweeps measured, in one query: every /sim/
    # request reads them, so its SQL is built once per process (serving/prepared.py).
    recent = Run.objects.sweeps().finished().order_by("-queued_at", "-pk").values("pk")[:RECENT_RUNS]
    return Run.objects.filter(Q(state__in=[Run.State.QUEUED, Run.State.RUNNING]) | Q(pk__in=recent)).order_by(
        "-queued_at", "-pk"
    )


_QUEUE = PreparedQuery(Run, _queue_rows)


@register.simple_tag
def run_queue() -> RunQueue:
    """One query: the runs waiting or measuring, and the last sweeps measured (newest first)."""
    rows = _QUEUE.run()
    running = next((run for run in rows if run.state == Run.State.RUNNING), None)
    waiting = sum(1 for run in rows if run.state == Run.State.QUEUED)
    recent = [run for run in rows if run.state == Run.State.DONE and run.kind == Run.Kind.SWEEP]
    return RunQueue(running, waiting, recent[:RECENT_RUNS])

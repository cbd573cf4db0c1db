"""The run queue that /sim/ shows every visitor: read on each request, in a per_visitor part of
the page kept per content version (serving/kept_pages.py), since runs start and end between
content changes."""

from dataclasses import dataclass

from django import template

from serving.prepared import PreparedQuery

from ..models import Run

register = template.Library()


@dataclass(frozen=True)
class RunQueue:
    running: Run | None
    waiting: int
    recent: list[Run]  # the last sweeps measured


RECENT_RUNS = 5


# Every /sim/ request reads both: their SQL is built once per process (serving/prepared.py).
_ACTIVE = PreparedQuery(Run, lambda: Run.objects.active())
_RECENT = PreparedQuery(Run, lambda: Run.objects.sweeps().finished()[:RECENT_RUNS])


@register.simple_tag
def run_queue() -> RunQueue:
    """Two queries: the runs waiting or measuring, and the last sweeps measured."""
    active = _ACTIVE.run()
    running = next((run for run in active if run.state == Run.State.RUNNING), None)
    waiting = sum(1 for run in active if run.state == Run.State.QUEUED)
    return RunQueue(running, waiting, _RECENT.run())

"""Tasks for the task workers (`manage.py db_worker`): slow work that must not run in a web process."""

from django_tasks import task

from .runs import work_through_queue


@task()
def run_queued_sweeps() -> int:
    """Measure the queued real runs (sweeps and prefix-cache runs), one at a time; enqueued once
    per run started."""
    return work_through_queue()

"""django-tasks-db's task worker, named by its process (felab_sim.processes).

A task row then says which process holds it, so when that process is gone, even killed by
SIGKILL, the next run's task can tell and fail the dead worker's run and task row
(felab_sim.runs.reap_dead_runs) instead of waiting behind them.
"""

from __future__ import annotations

from argparse import ArgumentParser

from django_tasks_db.management.commands import db_worker

from felab_sim.processes import process_name


class Command(db_worker.Command):
    help = "Run a database task worker named by its process, so a dead one can be told from a live one"

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(worker_id=process_name())

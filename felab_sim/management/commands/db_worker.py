"""django-tasks-db's task worker, which also watches for runs whose worker died.

Each worker names itself by its process (felab_sim.processes), so the others can tell when it
is gone, and looks every WATCH_EVERY_S for runs and task rows left RUNNING by a dead worker
(felab_sim.runs.watch_runs): a worker killed mid-run, even by SIGKILL, neither holds the one
slot nor its owner's turn for long, whether or not anyone opens a page.
"""

from __future__ import annotations

import threading
from argparse import ArgumentParser
from typing import Any

from django_tasks_db.management.commands import db_worker

from felab_sim.processes import process_name
from felab_sim.runs import WATCH_EVERY_S, watch_runs


class Command(db_worker.Command):
    help = "Run a database task worker that also fails the real runs of workers that died"

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(worker_id=process_name())
        parser.add_argument(
            "--watch-every",
            type=float,
            default=WATCH_EVERY_S,
            help="seconds between looks for runs whose worker died (default: %(default)s)",
        )

    def handle(self, *args: Any, watch_every: float, **options: Any) -> None:
        stop = threading.Event()
        watch = threading.Thread(target=watch_runs, args=(stop, watch_every), name="run-watch", daemon=True)
        watch.start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()

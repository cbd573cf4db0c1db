"""The task worker's own loop (django-tasks-db's `db_worker`), for tests."""

from django.db import connection
from django_tasks_db.management.commands.db_worker import Worker


def work_off_the_queue() -> None:
    """What `manage.py db_worker` does, until no task is due, in the calling thread (a run
    that waits for its turn has deferred its task, which is then not due yet).

    Tests run it in their own thread, or in one thread beside a browser, never as a polling
    worker: a worker polling beside the test shares its in-memory SQLite database, whose locks
    fail at once ("database schema is locked") instead of waiting as a database file's do.
    """
    try:
        Worker(
            queue_names=["default"], interval=0, batch=True, backend_name="default", startup_delay=False,
            max_tasks=None, worker_id="test-worker", excluded_queue_names=[],
        ).run()  # fmt: skip
    finally:
        if not connection.in_atomic_block:
            connection.close()

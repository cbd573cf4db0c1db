"""The load test of bench/bench_load.py in a short form: gunicorn, real HTTP, nothing lost.

Runs against SQLite, and against PostgreSQL too when the suite itself runs on PostgreSQL
(DATABASE_URL), each time on a scratch database of its own.
"""

import os
import signal

import pytest

from tests.support.load import duplicated_showings, run_load, stored_reviews
from tests.support.site import running_site, scratch_database

ENGINES = ["sqlite"] + (["postgres"] if os.environ.get("DATABASE_URL", "").startswith("postgres") else [])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kill_a_worker", [False, True], ids=["steady", "worker killed"])
def test_every_acknowledged_rating_is_stored_once(engine, kill_a_worker):
    database_url = scratch_database(engine, name="felab_load_test")
    with running_site(database_url, workers=3) as site:

        def kill() -> None:
            os.kill(site.worker_pids()[0], signal.SIGKILL)

        report = run_load(
            site.url, students=20, ratings_each=6, during=kill if kill_a_worker else None, after_s=0.5
        )

    stored = stored_reviews(database_url)
    assert report.server_errors == 0, report.statuses
    assert duplicated_showings(database_url) == 0
    for student, acknowledged in report.students.items():
        # Acknowledged means stored; a request cut after its commit may be stored unacknowledged.
        assert stored.get(student, 0) >= acknowledged
    assert sum(stored.values()) <= report.sent
    if not kill_a_worker:
        assert report.transport_errors == 0
        assert report.acknowledged == report.sent == 120
        assert sum(stored.values()) == 120

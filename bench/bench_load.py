"""Nothing lost: 2,000 self-assessments from 100 concurrent students, then the database is counted.

    python bench/bench_load.py [--students 100] [--ratings 20] [--engines sqlite,postgres]

For each database: gunicorn with production settings on a fresh database; every student
rates cards at once; then the rows stored per student are compared with what the site
acknowledged. A second run kills one gunicorn worker one second in: every request either
completes or fails cleanly (a cut connection, never a 5xx), and the data stays consistent.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.load import LoadReport, duplicated_showings, run_load, stored_reviews
from tests.support.site import running_site, scratch_database


def check(
    engine: str, students: int, ratings: int, kill_a_worker: bool
) -> tuple[LoadReport, dict[str, int], int]:
    database_url = scratch_database(engine, name="felab_load")
    with running_site(database_url) as site:

        def kill() -> None:
            os.kill(site.worker_pids()[0], signal.SIGKILL)

        report = run_load(site.url, students, ratings, during=kill if kill_a_worker else None)
    stored = stored_reviews(database_url)
    return report, stored, duplicated_showings(database_url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--ratings", type=int, default=20)
    parser.add_argument("--engines", default="sqlite,postgres")
    args = parser.parse_args()

    print(
        f"{args.students} students x {args.ratings} ratings, all at once, gunicorn with production settings"
    )
    header = f"{'database':<10} {'fault':<14} {'sent':>6} {'acked':>6} {'stored':>7} {'lost':>5} {'extra':>6}"
    header += f" {'dup':>4} {'5xx':>4} {'cut':>4} {'req/s':>7}"
    print(header)
    failures = 0
    for engine in args.engines.split(","):
        for kill in (False, True):
            report, stored, duplicates = check(engine, args.students, args.ratings, kill)
            lost = sum(max(0, acked - stored.get(key, 0)) for key, acked in report.students.items())
            # A request cut after its commit is stored but not acknowledged: extra, not lost.
            extra = sum(max(0, count - report.students.get(key, 0)) for key, count in stored.items())
            requests = sum(report.statuses.values())
            print(
                f"{engine:<10} {'worker killed' if kill else 'none':<14} {report.sent:>6} {report.acknowledged:>6} "
                f"{sum(stored.values()):>7} {lost:>5} {extra:>6} {duplicates:>4} {report.server_errors:>4} "
                f"{report.transport_errors:>4} {requests / report.seconds:>7.1f}"
            )
            failures += (
                lost + duplicates + report.server_errors + (0 if kill else extra + report.transport_errors)
            )
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

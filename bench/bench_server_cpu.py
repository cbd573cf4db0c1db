"""gunicorn's CPU time per request of bench_http's pages, one request at a time.

    python bench/bench_server_cpu.py [--requests 1000] [--rounds 2] [--only NAME]

The same site, student and pages as bench/bench_http.py, but no load generator: each page is
asked --requests times, one request after another on a new connection each (as wrk's are to
gunicorn's sync workers), and the CPU time gunicorn's master and workers spent is read from /proc
before and after. With nothing queued, a request's CPU time is what the page costs the server
without a load generator on the same cores; other jobs on a shared machine still slow every
request, so its rounds spread too (0.35 to 0.55 for one page in its first run). A second look at
a change, beside bench_http's, whose targets are under load. Each page's ratio is the trivial view's time over
its own in the same round, the median of --rounds rounds; the targets are bench_http's.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_http import PAGES, Page, Student, verdict
from tests.support.server_cpu import server_cpu_seconds
from tests.support.site import running_site, scratch_database

WARM_UP_REQUESTS = 100


def request_of(
    site_url: str, page: Page, student: Student | None
) -> tuple[str, bytes | None, dict[str, str]]:
    """The method, body and headers of one request of ``page``, as bench_http's wrk sends it."""
    headers = {"Cookie": student.cookie} if student else {}
    if page.form is None:
        return "GET", None, headers
    body = urllib.parse.urlencode({**page.form, "csrfmiddlewaretoken": student.csrf_token}).encode()
    headers |= {
        "HX-Request": "true",
        "Referer": site_url + page.path,
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return "POST", body, headers


def ask(host: str, port: int, path: str, method: str, body: bytes | None, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests per page and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default="", help="measure only the pages whose name contains this")
    args = parser.parse_args()
    trivial, *pages = PAGES
    pages = [trivial, *(page for page in pages if args.only.casefold() in page.name.casefold())]
    cpu_ms: dict[str, list[float]] = {page.name: [] for page in pages}
    with running_site(scratch_database("sqlite")) as site:
        address = urllib.parse.urlsplit(site.url)
        students = {
            page.name: Student(site.url, f"cpu-student-{number}") if page.signed_in else None
            for number, page in enumerate(pages)
        }
        for _ in range(args.rounds):
            for page in pages:
                method, body, headers = request_of(site.url, page, students[page.name])
                for _ in range(WARM_UP_REQUESTS):  # every worker builds what it keeps
                    ask(address.hostname, address.port, page.path, method, body, headers)
                before = server_cpu_seconds(site)
                for _ in range(args.requests):
                    status = ask(address.hostname, address.port, page.path, method, body, headers)
                    if status >= 400:
                        raise SystemExit(f"{page.name}: {status}")
                cpu_ms[page.name].append((server_cpu_seconds(site) - before) * 1000 / args.requests)
    print(
        f"gunicorn's CPU per request, {args.requests} requests one at a time per page and round,"
        f" median of {args.rounds} rounds (their range last)"
    )
    print(f"{'page':<38} {'CPU ms':>7} {'ratio':>6} {'target':>7} {'':>7} {'rounds':>10}")
    missed = 0
    for page in pages:
        rounds = cpu_ms[page.name]
        # Each round's ratio is to the trivial view's time in the same round.
        ratios = sorted(trivial_ms / ms for trivial_ms, ms in zip(cpu_ms[trivial.name], rounds, strict=True))
        ratio = statistics.median(ratios)
        target = f">= {page.target}" if page.target else ""
        outcome = verdict(page, ratio)
        missed += outcome == "NOT met"
        spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}" if len(ratios) > 1 else ""
        print(
            f"{page.name:<38} {statistics.median(rounds):>7.3f} {ratio:>6.2f}"
            f" {target:>7} {outcome:>7} {spread:>10}"
        )
    print(f"targets: {sum(1 for page in pages if page.target) - missed} met, {missed} not met")


if __name__ == "__main__":
    main()

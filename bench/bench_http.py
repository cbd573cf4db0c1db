"""Requests per second and latency under wrk, against gunicorn with production settings.

    python bench/bench_http.py [--seconds 5] [--rounds 3] [--connections 16] [--only NAME]

Starts `gunicorn --config config/gunicorn.conf.py` on a free port with a scratch SQLite
database holding the bundled lessons, as a site's only host without Redis (`FELAB_ONE_HOST=1`:
sessions from its file cache; tests/support/site.py), then runs wrk (Debian's package) on each page. The
machine is shared and noisy, so each page is reported as a ratio to a trivial Django view
(/healthz) measured in the same run, before the first page and after each (a page's ratio is
to the two runs beside it), the first time after an unmeasured two-second run that lets every
worker build what it keeps. One run's rate moves by up to a quarter with the machine's other
jobs, so the whole list is measured --rounds times and each page's ratio is its median.
Beside it, the CPU time gunicorn's processes spent per request (the master and its workers, from
/proc, wrk's own time left out), as the trivial view's time over the page's: what a page costs the
server, apart from the client's share of the machine. On these shared 2 cores its rounds spread
about as widely as the requests' ratio (a request's CPU time slows with the other jobs too); the
targets are the requests' ratio's.

Issue 23's pages are requested signed in: before each, a new student signs up, shows and rates
step 1 and shows step 3 through the site's own forms, so step 1 is rated (the page says so for
a minute), step 3 shown and not rated, step 2 not opened. The two POSTs are sent as htmx sends
them (HX-Request, the CSRF token in the body, the session's cookies) by wrk with a Lua script
that sets the method and body. Targets: every signed-in page 0.4 of the trivial view, /sim/
0.6, the POSTs 0.25; issue 14's anonymous card page 0.35.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.server_cpu import server_cpu_seconds
from tests.support.site import running_site, scratch_database

LESSON = "/learn/llm-inference-performance/concurrency-sweep/"
CARD = LESSON + "step-1/"  # shown and rated by the student just before it is measured
UNSEEN_CARD = LESSON + "step-2/"  # never opened by the student
SHOWN_CARD = LESSON + "step-3/"  # answer shown, not rated
TRIVIAL = "trivial view (/healthz)"
ANONYMOUS_CARD = "card page (answer shown), anonymous"  # a first-time visitor's: issue 14's target
SIGNED_IN = 0.4  # issue 23: every page a studying student opens, signed in
SIM_DEFAULT = 0.6  # issue 23: /sim/ with default settings is the same for everyone
POSTS = 0.25  # issue 23: the two POSTs a student makes on every card


@dataclass(frozen=True)
class Page:
    name: str
    path: str
    target: float | None = None
    signed_in: bool = True
    form: dict[str, str] | None = None  # a POST with this body (and the CSRF token), as htmx sends it


PAGES = [
    Page(TRIVIAL, "/healthz", signed_in=False),
    Page(ANONYMOUS_CARD, CARD + "?answer=shown", 0.35, signed_in=False),
    Page("card, answer hidden, not rated", UNSEEN_CARD, SIGNED_IN),
    Page("card, answer shown, not rated", SHOWN_CARD + "?answer=shown", SIGNED_IN),
    Page("card, answer hidden, rated", CARD, SIGNED_IN),
    Page("card, answer shown, rated", CARD + "?answer=shown", SIGNED_IN),
    Page("lesson page", LESSON, SIGNED_IN),
    Page("home page (course map)", "/", SIGNED_IN),
    Page("/progress/", "/progress/", SIGNED_IN),
    Page("/review/", "/review/", SIGNED_IN),
    Page("/glossary/", "/glossary/", SIGNED_IN),
    Page("calculator page (prefill)", "/sim/calc/prefill/", SIGNED_IN),
    Page("/sim/ (default parameters)", "/sim/", SIM_DEFAULT),
    # The same page for a visitor who is not signed in: what it costs apart from the signed-in
    # visitor's session, user and Log out form, which every signed-in page pays.
    Page("/sim/ (default parameters), anonymous", "/sim/", SIM_DEFAULT, signed_in=False),
    Page("/sim/sweep.json (default)", "/sim/sweep.json", signed_in=False),
    Page(
        "POST Show answer (htmx)", SHOWN_CARD + "show/", POSTS, form={"answer": "More people share a step."}
    ),
    Page("POST rate (htmx)", CARD + "rate/", POSTS, form={"rating": "3"}),
]
WARM_UP_SECONDS = 2
# wrk sends each request of a POST run with this method, body and these headers.
POST_SCRIPT = """wrk.method = "POST"
wrk.body = "{body}"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
"""


def verdict(page: Page, ratio: float, errors: int = 0) -> str:
    """ "met", "NOT met", or "" for a page with no target."""
    if page.target is None:
        return ""
    return "met" if ratio >= page.target and not errors else "NOT met"


def to_ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def wrk(
    url: str, seconds: int, connections: int, headers: dict[str, str], script: str = ""
) -> tuple[float, float, float, int, int]:
    """(requests/s, p50 ms, p99 ms, non-2xx/3xx responses, requests)."""
    flags = [arg for name, value in headers.items() for arg in ("-H", f"{name}: {value}")]
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        if script:
            lua.write(script)
            lua.flush()
            flags += ["-s", lua.name]
        out = subprocess.run(
            ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", *flags, url],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
    p50 = to_ms(re.search(r"\s50%\s+(\S+)", out)[1])
    p99 = to_ms(re.search(r"\s99%\s+(\S+)", out)[1])
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    requests = int(re.search(r"(\d+) requests in", out)[1])
    return rps, p50, p99, int(bad[1]) if bad else 0, requests


class Run(NamedTuple):
    """One measured wrk run of a page."""

    rps: float
    p50: float  # ms
    p99: float  # ms
    bad: int  # non-2xx/3xx responses
    cpu_ms: float  # gunicorn's CPU time per request


class Round(NamedTuple):
    """One page's run in one round, with the trivial view's runs just before and after it."""

    page: Page
    trivial_rps: float  # the mean of the two beside it
    trivial_cpu_ms: float
    run: Run


@dataclass
class Student:
    """A student who signed up and studied through the site's own forms; their cookies."""

    site_url: str
    username: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def __post_init__(self) -> None:
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        password = "bench-" + "p4ss-w0rd-long-enough"
        self.post(
            "/accounts/signup/", {"username": self.username, "password1": password, "password2": password}
        )
        self.post(CARD + "show/", {"answer": "More people share each step, so the total rises."}, page=CARD)
        self.post(CARD + "rate/", {"rating": "3"}, page=CARD + "?answer=shown")
        self.post(SHOWN_CARD + "show/", {"answer": "It grows."}, page=SHOWN_CARD)

    @property
    def csrf_token(self) -> str:
        return next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")

    @property
    def cookie(self) -> str:
        return "; ".join(f"{cookie.name}={cookie.value}" for cookie in self.jar)

    def post(self, path: str, form: dict[str, str], page: str = "") -> None:
        self.opener.open(self.site_url + (page or path)).read()  # the form's page sets the CSRF cookie
        data = urllib.parse.urlencode({**form, "csrfmiddlewaretoken": self.csrf_token}).encode()
        request = urllib.request.Request(
            self.site_url + path, data, headers={"Referer": self.site_url + path}
        )
        self.opener.open(request, timeout=10).read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5, help="each measured wrk run")
    parser.add_argument(
        "--rounds", type=int, default=3, help="times each page is measured; its ratio is the median"
    )
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--only", default="", help="measure only the pages whose name contains this")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is missing: apt-get install -y wrk (make bench does it)")

    trivial, *pages = PAGES
    pages = [page for page in pages if args.only.casefold() in page.name.casefold()]
    rows = []
    students = itertools.count(1)
    # The only host, without Redis: its sessions in its own file cache (docs/deploy.md).
    with running_site(scratch_database("sqlite"), extra_env={"REDIS_URL": "", "FELAB_ONE_HOST": "1"}) as site:

        def measure(page: Page, warm_up: bool) -> Run:
            url = site.url + page.path
            headers, script = {}, ""
            if page.signed_in:
                # Signed up and rated just before: the page says "You rated it" for a minute after.
                student = Student(site.url, f"bench-student-{next(students)}")
                headers["Cookie"] = student.cookie
                if page.form is None:
                    html = student.opener.open(url, timeout=10).read()
                    if b"Log out" not in html:
                        title = re.search(rb"<title>(.*?)</title>", html, re.S)
                        raise SystemExit(
                            f"{page.name}: the student is not signed in ({title and title[1]!r})"
                        )
                else:
                    body = urllib.parse.urlencode({**page.form, "csrfmiddlewaretoken": student.csrf_token})
                    script = POST_SCRIPT.format(body=body)
                    headers |= {"HX-Request": "true", "Referer": url}
            # Every worker builds what it keeps per content version on its first requests:
            # a short unmeasured run first (in the first round), so the numbers are the steady state's.
            if warm_up:
                wrk(url, WARM_UP_SECONDS, args.connections, headers, script)
            cpu_before = server_cpu_seconds(site)
            rps, p50, p99, bad, requests = wrk(url, args.seconds, args.connections, headers, script)
            cpu_ms = (server_cpu_seconds(site) - cpu_before) * 1000 / max(requests, 1)
            return Run(rps, p50, p99, bad, cpu_ms)

        # The trivial view before the first page and after each: a page's ratio is to the mean of
        # the two runs beside it, so the machine's drift during the run does not tilt it. Other
        # jobs on a shared machine move one run's rate by a quarter, so every page is measured
        # in several rounds and its ratio is the median of its rounds.
        trivial_runs = []
        for round_number in range(args.rounds):
            first = round_number == 0
            trivial_runs.append(measure(trivial, first))
            for page in pages:
                measured = measure(page, first)
                trivial_runs.append(measure(trivial, first))
                before, after = trivial_runs[-2], trivial_runs[-1]
                rows.append(
                    Round(page, (before.rps + after.rps) / 2, (before.cpu_ms + after.cpu_ms) / 2, measured)
                )

    print(
        f"wrk -t2 -c{args.connections} -d{args.seconds}s against gunicorn (production settings, SQLite);"
        " each page's ratio is to the trivial view's runs just before and after it, the median of"
        f" {args.rounds} rounds (their range last); load average {os.getloadavg()[0]:.1f} at the end"
    )
    print(
        f"{'page':<38} {'req/s':>8} {'ratio':>6} {'target':>7} {'':>7} {'p50 ms':>7} {'p99 ms':>7} {'errors':>6}"
        f" {'rounds':>9} {'CPU ms':>6} {'CPU ratio':>9} {'rounds':>9}"
    )
    trivial_rps = sorted(run.rps for run in trivial_runs)
    median = trivial_rps[len(trivial_rps) // 2]
    worst_p50, worst_p99 = max(run.p50 for run in trivial_runs), max(run.p99 for run in trivial_runs)
    errors = sum(run.bad for run in trivial_runs)
    trivial_cpu = statistics.median(run.cpu_ms for run in trivial_runs)
    print(
        f"{trivial.name:<38} {median:>8.1f} {1:>6.2f} {'':>7} {'':>7} {worst_p50:>7.2f} {worst_p99:>7.2f} {errors:>6}"
        f" {'':>9} {trivial_cpu:>6.2f} {1:>9.2f}"
    )
    print(
        f"  ({len(trivial_runs)} runs, {trivial_rps[0]:.1f} to {trivial_rps[-1]:.1f} req/s; p50 and p99 the worst)"
    )
    missed = 0
    for page in pages:
        rounds = [row.run for row in rows if row.page is page]
        ratios = sorted(row.run.rps / row.trivial_rps for row in rows if row.page is page)
        # The trivial view's CPU over the page's: the same direction as the requests' ratio.
        cpu_ratios = sorted(row.trivial_cpu_ms / row.run.cpu_ms for row in rows if row.page is page)
        ratio, cpu_ratio = statistics.median(ratios), statistics.median(cpu_ratios)
        rps, cpu_ms = (
            statistics.median(run.rps for run in rounds),
            statistics.median(run.cpu_ms for run in rounds),
        )
        p50, p99 = statistics.median(run.p50 for run in rounds), max(run.p99 for run in rounds)
        bad = sum(run.bad for run in rounds)
        target = f">= {page.target}" if page.target else ""
        outcome = verdict(page, ratio, bad)
        missed += outcome == "NOT met"
        spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}" if len(ratios) > 1 else ""
        cpu_spread = f"{cpu_ratios[0]:.2f}-{cpu_ratios[-1]:.2f}" if len(cpu_ratios) > 1 else ""
        print(
            f"{page.name:<38} {rps:>8.1f} {ratio:>6.2f} {target:>7} {outcome:>7} {p50:>7.2f} {p99:>7.2f}"
            f" {bad:>6} {spread:>9} {cpu_ms:>6.2f} {cpu_ratio:>9.2f} {cpu_spread:>9}"
        )
    print(f"targets: {sum(1 for page in pages if page.target) - missed} met, {missed} not met")


if __name__ == "__main__":
    main()

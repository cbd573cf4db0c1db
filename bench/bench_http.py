"""Requests per second and latency under wrk, against gunicorn with production settings.

    python bench/bench_http.py [--seconds 10] [--connections 16]

Starts `gunicorn --config config/gunicorn.conf.py` on a free port with a scratch SQLite
database holding the bundled lessons (bench/site.py), then runs wrk (Debian's package) on each page. The
machine is shared and noisy, so each page is reported as a ratio to a trivial Django view
(/healthz) measured in the same run, before the first page and after each (a page's ratio is
to the two runs beside it), each after an unmeasured two-second run that lets every
worker build what it keeps. The signed-in card page is requested with the session of a
student who signed up, showed the card's answer and rated it through the site's own forms.
Issue 14's target: the card page at 0.35 of the trivial view or more.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import re
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.site import running_site, scratch_database

CARD = "/learn/llm-inference-performance/concurrency-sweep/step-1/"
CARD_PAGE = "card page (answer shown)"  # a first-time visitor's: issue 14's target
SIGNED_IN = "card page, signed in"
PAGES = {
    "trivial view (/healthz)": "/healthz",
    "home page (course map)": "/",
    "lesson page": "/learn/llm-inference-performance/concurrency-sweep/",
    CARD_PAGE: CARD + "?answer=shown",
    SIGNED_IN: CARD + "?answer=shown",
    "/sim/ (default parameters)": "/sim/",
    "calculator page (prefill)": "/sim/calc/prefill/",
    "/sim/sweep.json (default)": "/sim/sweep.json",
}
CARD_TARGET = 0.35
WARM_UP_SECONDS = 2


def to_ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def wrk(url: str, seconds: int, connections: int, cookie: str = "") -> tuple[float, float, float, int]:
    """(requests/s, p50 ms, p99 ms, non-2xx/3xx responses)."""
    headers = ["-H", f"Cookie: {cookie}"] if cookie else []
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", *headers, url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
    p50 = to_ms(re.search(r"\s50%\s+(\S+)", out)[1])
    p99 = to_ms(re.search(r"\s99%\s+(\S+)", out)[1])
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, p50, p99, int(bad[1]) if bad else 0


def signed_in_student(site_url: str) -> str:
    """Sign up, show the card's answer and rate it with the site's forms; the Cookie header."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def post(path: str, form: dict[str, str], page: str = "") -> None:
        opener.open(site_url + (page or path)).read()  # the form's page sets the CSRF cookie
        token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
        data = urllib.parse.urlencode({**form, "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(site_url + path, data, headers={"Referer": site_url + path})
        opener.open(request, timeout=10).read()

    password = "bench-" + "p4ss-w0rd-long-enough"
    post("/accounts/signup/", {"username": "bench-student", "password1": password, "password2": password})
    post(CARD + "show/", {"answer": "More people share each step, so the total rises."}, page=CARD)
    post(CARD + "rate/", {"rating": "3"}, page=CARD + "?answer=shown")
    return "; ".join(f"{cookie.name}={cookie.value}" for cookie in jar)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is missing: apt-get install -y wrk (make bench does it)")

    trivial_name, trivial_path = next(iter(PAGES.items()))
    rows = []
    with running_site(scratch_database("sqlite")) as site:

        def measure(name: str, path: str) -> tuple[float, float, float, int]:
            url = site.url + path
            # Signed up and rated just before: the page says "You rated it" for a minute after.
            headers = {"Cookie": signed_in_student(site.url)} if name == SIGNED_IN else {}
            page = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10).read()
            if name == SIGNED_IN and not (b"Log out" in page and b"You rated it" in page):
                raise SystemExit(
                    "the signed-in card page shows no rating of the student's: sign-up or rating failed"
                )
            # Every worker builds what it keeps per content version on its first requests:
            # a short unmeasured run first, so the numbers are the steady state's.
            wrk(url, WARM_UP_SECONDS, args.connections, headers.get("Cookie", ""))
            return wrk(url, args.seconds, args.connections, headers.get("Cookie", ""))

        # The trivial view before the first page and after each: a page's ratio is to the mean of
        # the two runs beside it, so the machine's drift during the run does not tilt it.
        trivial_runs = [measure(trivial_name, trivial_path)]
        for name, path in list(PAGES.items())[1:]:
            measured = measure(name, path)
            trivial_runs.append(measure(trivial_name, trivial_path))
            rows.append((name, (trivial_runs[-2][0] + trivial_runs[-1][0]) / 2, *measured))

    print(
        f"wrk -t2 -c{args.connections} -d{args.seconds}s against gunicorn (production settings, SQLite);"
        " each page's ratio is to the trivial view's runs just before and after it"
    )
    print(f"{'page':<30} {'req/s':>9} {'ratio':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    trivial_rps = sorted(run[0] for run in trivial_runs)
    median = trivial_rps[len(trivial_rps) // 2]
    worst_p50, worst_p99 = max(run[1] for run in trivial_runs), max(run[2] for run in trivial_runs)
    errors = sum(run[3] for run in trivial_runs)
    print(f"{trivial_name:<30} {median:>9.1f} {1:>7.2f} {worst_p50:>8.2f} {worst_p99:>8.2f} {errors:>7}")
    print(
        f"  ({len(trivial_runs)} runs, {trivial_rps[0]:.1f} to {trivial_rps[-1]:.1f} req/s; p50 and p99 the worst)"
    )
    for name, trivial, rps, p50, p99, bad in rows:
        print(f"{name:<30} {rps:>9.1f} {rps / trivial:>7.2f} {p50:>8.2f} {p99:>8.2f} {bad:>7}")
    for name, trivial, rps, *_ in rows:
        if name == CARD_PAGE:
            verdict = "met" if rps / trivial >= CARD_TARGET else "NOT met"
            print(f"target: {name} at >= {CARD_TARGET} of the trivial view: {rps / trivial:.2f}, {verdict}")


if __name__ == "__main__":
    main()

"""bench_http's pages of a studying student, in-process: CPU time, Python calls and SQL per request.

    python bench/bench_signed_in.py [--runs 100] [--only NAME[,NAME…]] [--heavy] [--top N [--sort KEY] [--callers REGEX]]

Production settings without Redis (sessions in the database), a scratch SQLite database with the
bundled lessons, Django's test client. The student is bench_http's: signed up, step 1 shown and
rated, step 3 shown. With --heavy, a student with a long history besides: every published card
shown and rated through the site's forms, and HEAVY_ATTEMPTS practice attempts spread over
every published template and the past HEAVY_DAYS days, each template scheduled from them, so
a page whose work grows with a learner's history shows it. Per page: the median CPU time of --runs requests after 20 unmeasured ones,
the Python function calls of one request (cProfile) and its SQL queries. Calls and queries do not
depend on the machine's load, so they compare runs on a shared machine where times cannot.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_ENV": "production",
        "DJANGO_INSECURE_HTTP": "1",
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 40,
        "ALLOWED_HOSTS": "testserver",
        "DATABASE_URL": f"sqlite:///{Path(tempfile.mkdtemp(prefix='felab-bench-')) / 'bench.sqlite3'}",
        "FELAB_CACHE_DIR": tempfile.mkdtemp(prefix="felab-cache-"),
        "FELAB_SWEEP_LIMIT": "0",
        "FELAB_LOGIN_LIMIT": "0",
        "FELAB_WRITE_LIMIT": "0",
        "FELAB_LEARNER_WRITE_LIMIT": "0",
    }
)
os.environ.pop("REDIS_URL", None)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.bench_http import CARD, PAGES, SHOWN_CARD, Page  # noqa: E402

PASSWORD = "bench-" + "p4ss-w0rd-long-enough"
HEAVY_ATTEMPTS = 1_200
HEAVY_DAYS = 120


def studying_student() -> Client:
    """bench_http's student: step 1 shown and rated, step 3 shown, step 2 never opened."""
    client = Client()
    response = client.post(
        "/accounts/signup/", {"username": "bench-student", "password1": PASSWORD, "password2": PASSWORD}
    )
    if response.status_code != 302:
        raise SystemExit(f"sign-up failed: {response.status_code}")
    client.post(CARD + "show/", {"answer": "More people share each step, so the total rises."})
    client.post(CARD + "rate/", {"rating": "3"})
    client.post(SHOWN_CARD + "show/", {"answer": "It grows."})
    return client


def heavy_student() -> Client:
    """The studying student, then every published card rated and HEAVY_ATTEMPTS practice attempts.

    The cards go through the site's forms, as a student rates them. The attempts are written
    directly (checked answers would need each draw's numbers), then each template's schedule is
    rebuilt from them as the practice page does after an answer.
    """
    from datetime import timedelta

    from django.contrib.auth import get_user_model

    from lessons.models import Card, PracticeTemplate
    from quiz import clock
    from quiz.learner_rows import RowOwner
    from quiz.models import PracticeAttempt, PracticeState, Rating, Verdict

    client = studying_student()
    for index, card in enumerate(Card.objects.published().select_related("lesson__course")):
        client.post(card.page_url + "show/", {"answer": "An answer."})
        client.post(card.page_url + "rate/", {"rating": str(Rating.HARD + index % 3)})
    user = get_user_model().objects.get(username="bench-student")
    templates = list(PracticeTemplate.objects.published().filter(lesson__published=True).order_by("pk"))
    now = clock.now()
    attempts = []
    for index in range(HEAVY_ATTEMPTS):
        right, ratio = index % 3 != 0, 1.0 + (index % 7) / 2
        attempts.append(
            PracticeAttempt(
                template=templates[index % len(templates)],
                user=user,
                seed=index,
                typed="1",
                value=ratio,
                expected=1.0,
                ratio=1.0 if right else ratio,
                first_ratio=ratio,
                verdict=Verdict.RIGHT if right else Verdict.OFF,
                first_verdict=Verdict.RIGHT if index % 2 else Verdict.OFF,
                proposed_rating=Rating.GOT_IT if right else Rating.MISSED_IT,
                rating=Rating.GOT_IT if right else Rating.MISSED_IT,
                tries=1 if index % 2 else 2,
                hints_used=int(index % 5 == 0),
                answered_at=now - timedelta(days=HEAVY_DAYS) * (1 - index / HEAVY_ATTEMPTS),
            )
        )
    PracticeAttempt.objects.bulk_create(attempts)
    for template in templates:
        PracticeState.rebuild(RowOwner(user_id=user.pk), template.pk)
    return client


def ask(client: Client, page: Page) -> HttpResponse:
    """The page's request, a POST as htmx sends it."""
    if page.form is None:
        return client.get(page.path)
    return client.post(page.path, page.form, headers={"HX-Request": "true"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument(
        "--only",
        default="",
        help="measure only the pages whose name contains this (or one of, comma-separated)",
    )
    parser.add_argument("--top", type=int, default=0, help="also print each page's N costliest functions")
    parser.add_argument("--sort", default="cumulative", help="--top's order: cumulative, tottime, ncalls")
    parser.add_argument(
        "--callers", default="", help="with --top: also who calls the functions matching this"
    )
    parser.add_argument(
        "--heavy", action="store_true", help="as a student with every card rated and a long practice history"
    )
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0)
    # The manifest the pages' {% static %} reads (on a fresh checkout there is none), collected
    # apart: the checkout's staticfiles/ is the test suite's, which may be running meanwhile.
    settings.STATIC_ROOT = tempfile.mkdtemp(prefix="felab-bench-static-")
    call_command("collectstatic", interactive=False, verbosity=0)
    student, anonymous = (heavy_student() if args.heavy else studying_student()), Client()
    who = f"heavy student ({HEAVY_ATTEMPTS} practice attempts, every card rated)" if args.heavy else "student"
    print(f"in-process, production settings without Redis, SQLite, {who}; median CPU of {args.runs} requests")
    print(f"{'page':40s} {'CPU ms':>7s} {'calls':>7s} {'SQL':>4s} {'bytes':>7s}")
    for page in PAGES:
        if not any(name.casefold() in page.name.casefold() for name in args.only.split(",")):
            continue
        request = functools.partial(ask, student if page.signed_in else anonymous, page)
        for _ in range(20):
            response = request()
        if response.status_code != 200:
            raise SystemExit(f"{page.name}: {response.status_code}")
        times = []
        for _ in range(args.runs):
            started = time.process_time()
            request()
            times.append(time.process_time() - started)
        profile = cProfile.Profile()
        profile.enable()
        request()
        profile.disable()
        with CaptureQueriesContext(connection) as queries:
            request()
        calls = pstats.Stats(profile).total_calls
        print(
            f"{page.name:40s} {statistics.median(times) * 1000:7.2f} {calls:7d} {len(queries):4d}"
            f" {len(response.content):7d}"
        )
        if args.top:  # over --runs more requests: one request's own times are below the clock's grain
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(args.runs):
                request()
            profile.disable()
            stats = pstats.Stats(profile).sort_stats(args.sort)
            stats.print_stats(args.top)
            if args.callers:
                stats.print_callers(args.callers)


if __name__ == "__main__":
    main()

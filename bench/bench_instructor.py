"""/instructor/ for a class: the first load after the class answered (cold) against a load with
nothing new (warm), in one run.

    .venv/bin/python bench/bench_instructor.py [--students 150] [--repeats 5] [--seed 1]

A scratch SQLite database with the bundled lessons (35 practice templates). Every student (an
account, so the class's statistics count it) has one first try at every template, written
straight to the database: right, or wrong by a factor (2×, ⅛, 3.3×, 0.4×) at fixed rates, so
every template has wrong first tries to group. Each repeat loads /instructor/ through Django's
test client three times, timing each in CPU seconds of this process and wall seconds:

- cold: the cache emptied first, so every template's wrong first tries are grouped again
  (quiz.class_mistakes.unnamed_groupings), as on the first load after a restart;
- warm: again, with nothing new: each template's grouping is read from the cache;
- one new try: a wrong first try at one template recorded first, so that template alone is
  grouped again;
- and the grouping alone (quiz.class_mistakes.unnamed_groupings, every template), cold and warm.

Reported: the median of each over the repeats, and cold ÷ warm, measured in the same run. The
cache is the development one (Django's LocMemCache, this process's memory); with Redis or the
production file cache a read costs a round trip more.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Per first try: right, or this factor of the right answer.
FACTORS = {1.0: 0.45, 2.0: 0.15, 0.125: 0.1, 3.3: 0.15, 0.4: 0.15}


def make_class(students: int, seed: int) -> int:
    """``students`` accounts, each with one first try at every template; returns the tries."""
    from django.contrib.auth.models import User

    from felab_sim.engine.problems.drill_specs import DrillError
    from lessons.models import PracticeTemplate
    from quiz.models import PracticeAttempt

    rng = random.Random(seed)
    templates = list(PracticeTemplate.objects.order_by("pk"))
    users = User.objects.bulk_create([User(username=f"student{n}") for n in range(students)])
    factors, weights = zip(*FACTORS.items(), strict=True)
    rows = []
    for user in users:
        for template in templates:
            draw = rng.randint(1, 1_000_000)
            try:
                right = template.problem(draw).answer
            except DrillError:
                continue
            rows.append(first_try(template, user, draw, right, rng.choices(factors, weights)[0]))
    PracticeAttempt.objects.bulk_create(rows)
    return len(rows)


def first_try(template, user, draw: int, right: float, factor: float):
    """A PracticeAttempt: one first try at ``factor`` times the right answer, not yet saved."""
    from quiz.models import PracticeAttempt, Rating, Verdict

    verdict = Verdict.RIGHT if factor == 1.0 else Verdict.OFF
    rating = Rating.GOT_IT if factor == 1.0 else Rating.MISSED_IT
    return PracticeAttempt(
        template=template,
        user=user,
        seed=draw,
        typed=f"{right * factor:.6g}",
        value=right * factor,
        expected=right,
        ratio=factor,
        verdict=verdict,
        first_verdict=verdict,
        first_ratio=factor,
        tries=1,
        proposed_rating=rating,
        rating=rating,
    )


def timed(work) -> tuple[float, float]:
    """(CPU s, wall s) of ``work()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def load(client) -> None:
    response = client.get("/instructor/")
    assert response.status_code == 200, response.status_code
    assert b'id="unnamed-mistakes"' in response.content


def one_new_try(number: int) -> None:
    """A wrong first try at the first template, by the first student, on a draw of its own."""
    from django.contrib.auth.models import User

    from lessons.models import PracticeTemplate

    template = PracticeTemplate.objects.order_by("pk").first()
    draw = 2_000_000 + number
    user = User.objects.get(username="student0")
    first_try(template, user, draw, template.problem(draw).answer, 2.0).save()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="felab-bench-instructor-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    from lessons.models import PracticeTemplate
    from quiz import class_mistakes

    # Pages link static files by name only here: no collectstatic manifest needed.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0)
    tries = make_class(args.students, args.seed)
    client = Client()
    client.force_login(User.objects.create_superuser("instructor", "", "x"))
    client.get("/instructor/")  # imports, the content version, the first query plans
    runs: dict[str, list[tuple[float, float]]] = {
        name: [] for name in ("cold", "warm", "one new try", "grouping: cold", "grouping: warm")
    }
    templates = list(PracticeTemplate.objects.order_by("pk"))
    for number in range(args.repeats):
        cache.clear()
        runs["cold"].append(timed(lambda: load(client)))
        runs["warm"].append(timed(lambda: load(client)))
        one_new_try(number)
        runs["one new try"].append(timed(lambda: load(client)))
        # The part kept, alone: what /instructor/ and drill --unnamed call.
        cache.clear()
        runs["grouping: cold"].append(timed(lambda: class_mistakes.unnamed_groupings(templates)))
        runs["grouping: warm"].append(timed(lambda: class_mistakes.unnamed_groupings(templates)))
    print(
        f"bench_instructor: {args.students} students, {len(templates)} templates, {tries} first tries, "
        f"median of {args.repeats} (seed {args.seed}; cache: {settings.CACHES['default']['BACKEND']})"
    )
    print(f"{'load':<16} {'CPU s':>8} {'wall s':>8}")
    medians = {}
    for name, times in runs.items():
        cpu = statistics.median(t[0] for t in times)
        wall = statistics.median(t[1] for t in times)
        medians[name] = (cpu, wall)
        print(f"{name:<16} {cpu:>8.3f} {wall:>8.3f}")
    for what, cold, warm in (
        ("/instructor/", medians["cold"], medians["warm"]),
        ("grouping alone", medians["grouping: cold"], medians["grouping: warm"]),
    ):
        print(f"{what}: cold ÷ warm {cold[0] / warm[0]:.1f}× CPU, {cold[1] / warm[1]:.1f}× wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())

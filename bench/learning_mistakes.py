"""Do planted unnamed mistakes surface? Issue 50, step 1's check for the learning bench.

    python bench/learning_mistakes.py [--students N] [--seed S]

``surfaced(plants)`` reads the class's attempts as /instructor/ does (quiz.class_mistakes.
unnamed_groupings, the latest felab_sim.engine.problems.unnamed_mistakes.PAGE_TRIES wrong first tries a
template) and says, for each planted (template, factor), whether the template's largest unnamed
group is that factor. bench/bench_learning.py calls it after its simulated weeks; run alone, this
module makes its own class on a scratch SQLite database with the bundled lessons: each simulated
student (an account, so the class's statistics count it at once) answers one draw of each planted
template through the site's own practice page (Django's test client POSTing /practice/SLUG/):
right, the planted mistake, a named mistake of the draw, or wrong some other way, at the rates in
``RATES``, each answer typed a little off as people type (within ±2%). It prints one row per plant
and how many of the five surface as their template's largest group (the target: at least 4).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (template slug, the factor students wrongly apply): five unnamed mistakes of different kinds.
PLANTS: tuple[tuple[str, float], ...] = (
    ("l01-ttft-long-prompt", 2.0),  # the prompt counted twice
    ("l05-kv-per-conversation", 1 / 1.073741824),  # bytes ÷ 2³⁰ where ÷ 10⁹ is asked: 6.9% low
    ("l12-moe-memory", 0.125),  # bits taken for bytes
    ("l17-adapter-file", 1000.0),  # a unit prefix slipped
    ("l11-qlora-memory", 0.5),  # half of it
)
# Per answer: right, the planted mistake, the draw's first named mistake, wrong some other way.
RATES = {"right": 0.40, "planted": 0.25, "named": 0.15, "other": 0.20}
TARGET = 4


def surfaced(plants: Iterable[tuple[str, float]]) -> list:
    """Each planted (template, factor): is it its template's largest unnamed group?
    (quiz.class_mistakes.planted_surfaced, reading the class as /instructor/ does.)"""
    from quiz.class_mistakes import planted_surfaced

    return planted_surfaced(plants)


def _typed(value: float, rng: random.Random) -> str:
    return f"{value * (1 + rng.uniform(-0.02, 0.02)):.6g}"


def simulate_class(students: int, seed: int) -> None:
    """``students`` accounts each answer one draw of every planted template on the practice page."""
    import time

    from django.contrib.auth.models import User
    from django.test import Client

    from lessons.models import PracticeTemplate

    rng = random.Random(seed)
    templates = {t.slug: t for t in PracticeTemplate.objects.filter(slug__in=[slug for slug, _ in PLANTS])}
    kinds, weights = zip(*RATES.items(), strict=True)
    for number in range(students):
        user = User.objects.create(username=f"sim{number}")
        client = Client()
        client.force_login(user)
        for slug, factor in PLANTS:
            draw = rng.randint(1, 1_000_000)
            problem = templates[slug].problem(draw)
            kind = rng.choices(kinds, weights)[0]
            if kind == "named" and problem.mistakes:
                value = problem.mistakes[0].value
            elif kind == "planted":
                value = problem.answer * factor
            elif kind == "other" or kind == "named":
                # Wrong some other way: anywhere from ÷10 to ×10, not near the right answer.
                value = problem.answer * math.exp(
                    rng.choice((-1, 1)) * rng.uniform(math.log(1.3), math.log(10))
                )
            else:
                value = problem.answer
            response = client.post(
                f"/practice/{slug}/", {"seed": draw, "answer": _typed(value, rng), "shown_at": time.time()}
            )
            assert response.status_code == 200, (slug, response.status_code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--seed", type=int, default=50)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="felab-bench-mistakes-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
    # The simulated class answers faster than any person: lift the per-learner write limit.
    os.environ["FELAB_LEARNER_WRITE_LIMIT"] = "100000"
    os.environ["FELAB_WRITE_LIMIT"] = "100000"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    # Pages link static files by name only here: no collectstatic manifest needed.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }

    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0)
    simulate_class(args.students, args.seed)
    rows = surfaced(PLANTS)
    print(f"Planted unnamed mistakes, {args.students} simulated students (seed {args.seed}):")
    print(
        f"{'template':<26} {'planted':>9}  {'largest unnamed group':<48} {'share':>6} {'wrong':>6}  surfaced"
    )
    for row in rows:
        print(
            f"{row.template:<26} {'×' + format(row.factor, '.4g'):>9}  {row.largest:<48} "
            f"{round(100 * row.share):>5}% {row.wrong:>6}  {'yes' if row.surfaced else 'no'}"
        )
    hits = sum(row.surfaced for row in rows)
    print(f"{hits} of {len(rows)} surface as their template's largest group (target: at least {TARGET}).")


if __name__ == "__main__":
    main()

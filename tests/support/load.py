"""Simulated students rating cards through a running site, and a count of what was stored.

Each student is an anonymous browser with its own cookies: it opens a card (CSRF cookie),
then repeats "Show answer" and a rating through htmx, as the card page does. What the site
acknowledged is compared with the rows in the database afterwards, per student: each
student tags its typed answers, since rows no longer carry anything of the session.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

CARDS = [f"/learn/llm-inference-performance/concurrency-sweep/step-{step}/" for step in (1, 2, 3)]


@dataclass
class LoadReport:
    sent: int = 0  # ratings sent
    acknowledged: int = 0  # ratings the site answered "Saved" to
    statuses: Counter = field(default_factory=Counter)
    transport_errors: int = 0  # connections cut (e.g. a killed worker): failed cleanly
    students: dict[str, int] = field(default_factory=dict)  # student tag -> ratings acknowledged
    seconds: float = 0.0

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


def student_tag(index: int) -> str:
    return f"student-{index:04d}"


async def _student(base_url: str, index: int, ratings: int, report: LoadReport, rng: random.Random) -> None:
    tag = student_tag(index)
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        try:
            response = await client.get(CARDS[index % len(CARDS)])
            report.statuses[response.status_code] += 1
        except httpx.TransportError:
            report.transport_errors += 1
            return
        acknowledged = 0
        for round_ in range(ratings):
            card = CARDS[(index + round_) % len(CARDS)]
            token = client.cookies.get("csrftoken", "")
            headers = {"X-CSRFToken": token}
            report.sent += 1
            try:
                shown = await client.post(
                    card + "show/", data={"answer": f"{tag} try {round_}"}, headers=headers
                )
                report.statuses[shown.status_code] += 1
                if shown.status_code != 302:
                    continue
                rated = await client.post(
                    card + "rate/",
                    data={"rating": rng.randint(1, 4)},
                    headers={**headers, "HX-Request": "true"},
                )
                report.statuses[rated.status_code] += 1
                if rated.status_code == 200 and "Saved:" in rated.text:
                    acknowledged += 1
            except httpx.TransportError:
                report.transport_errors += 1
        report.acknowledged += acknowledged
        report.students[tag] = acknowledged


async def _run(
    base_url: str, students: int, ratings_each: int, during: Callable[[], None] | None, after_s: float
) -> LoadReport:
    report = LoadReport()
    rng = random.Random(20261129)
    start = time.perf_counter()
    tasks = [asyncio.create_task(_student(base_url, i, ratings_each, report, rng)) for i in range(students)]
    if during is not None:
        await asyncio.sleep(after_s)
        during()
    await asyncio.gather(*tasks)
    report.seconds = time.perf_counter() - start
    return report


def run_load(
    base_url: str,
    students: int = 100,
    ratings_each: int = 20,
    during: Callable[[], None] | None = None,
    after_s: float = 1.0,
) -> LoadReport:
    """Every student at once; ``during`` is called ``after_s`` seconds in (to inject a fault)."""
    return asyncio.run(_run(base_url, students, ratings_each, during, after_s))


def stored_reviews(database_url: str) -> dict[str, int]:
    """Reviews in the database per student tag (the first word of the typed answer), with plain SQL."""
    query = "SELECT s.answer FROM quiz_review r JOIN quiz_showing s ON s.id = r.showing_id"
    if database_url.startswith("sqlite"):
        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            rows = conn.execute(query).fetchall()
    else:
        import psycopg

        with psycopg.connect(database_url) as conn:
            rows = conn.execute(query).fetchall()
    return dict(Counter(answer.split(" ", 1)[0] for (answer,) in rows))


def duplicated_showings(database_url: str) -> int:
    """Showings with more than one review: must be none (one rating per showing)."""
    query = (
        "SELECT COUNT(*) FROM (SELECT showing_id FROM quiz_review GROUP BY showing_id HAVING COUNT(*) > 1) d"
    )
    if database_url.startswith("sqlite"):
        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            return conn.execute(query).fetchone()[0]
    import psycopg

    with psycopg.connect(database_url) as conn:
        return conn.execute(query).fetchone()[0]

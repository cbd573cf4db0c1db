"""A study session: N simulated students signing up and working through cards, as the site's forms do.

    python bench/bench_study.py [--students 50,200,500] [--seconds 60] [--think-s 5] [--hosts 1,2]

Each student is an httpx async client with its own cookies (issue 23). It signs up through the
sign-up form, then goes through the course's cards in order: opens a card, waits, presses Show
answer, waits, rates it (both POSTs as htmx sends them, with the CSRF token), waits, and every
fifth card opens /review/ and every tenth /progress/. A wait is drawn from an exponential
distribution of mean --think-s. Students sign up before the measured minute (PBKDF2 makes a
sign-up cost about half a second of CPU; their own row in the table), then all study at once.

Against one gunicorn host (tests/support/cluster.py's hosts with PostgreSQL and Redis, asked
directly), then two hosts behind nginx. Per level: pages per second, p50 and p99 per page
kind, errors, and every acknowledged rating looked up in the database (0 lost), and where the
machine's CPU went per page: the app hosts' gunicorn processes, PostgreSQL's and Redis's server
processes, nginx, and this bench's own client (all from /proc, over the level's study alone). The
machine's load average is printed beside each run: it is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.cluster import running_cluster
from tests.support.server_cpu import cpu_seconds

PASSWORD = "study-" + "p4ss-w0rd-long-enough"
KINDS = ("card", "show", "rate", "review", "progress")
P99_TARGET_MS = 300.0
SIGNUPS_AT_ONCE = 4
# config/settings.py's default FELAB_LEARNER_WRITE_LIMIT: a student's Show answer and rating POSTs
# are counted as a deployed host counts them.
LEARNER_WRITE_LIMIT = 120
SLOWEST_SHOWN = 5


@dataclass
class Level:
    students: int
    seconds: float
    think_s: float
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    acknowledged: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # ratings per student
    started: float = field(default_factory=time.perf_counter)
    # The slowest requests: (ms, kind, path, seconds into the level), to say where a p99 comes from.
    slowest: list[tuple[float, str, str, float]] = field(default_factory=list)
    cpu_ms_per_page: dict[str, float] = field(default_factory=dict)  # by part of the machine

    @property
    def pages(self) -> int:
        return sum(len(times) for times in self.latencies.values())

    def worst_p99(self) -> float:
        return max(percentile(times, 99) for times in self.latencies.values() if times)


def percentile(values: list[float], p: float) -> float:
    """Nearest rank: index ceil(p/100 × n) − 1 of the sorted values."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * p // 100) - 1)] if ordered else float("nan")


def _processes_named(prefixes: tuple[str, ...]) -> list[int]:
    """Every process whose command line starts with one of the prefixes (PostgreSQL's backends
    name themselves "postgres: ...")."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if command.startswith(prefixes):
                pids.append(int(entry))
    return pids


def cpu_by_part(host_pids: list[int]) -> dict[str, float]:
    """CPU seconds so far of each part of the machine the study session runs on. A process that
    ends between two readings takes its time with it: compare readings over a level, not longer."""
    parts = {
        "gunicorn": host_pids,
        # The server and its backends; one that ended is in the server's time of reaped children.
        "postgres": _processes_named(("postgres", "/usr/lib/postgresql/")),
        "redis": _processes_named(("redis-server", "/usr/bin/redis-server")),
        "nginx": _processes_named(("nginx",)),
    }
    seconds = {"client": time.process_time()}
    for part, pids in parts.items():
        total = 0.0
        for pid in pids:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                total += cpu_seconds(pid)
        seconds[part] = total
    return seconds


def host_processes(cluster) -> list[int]:
    """The app hosts' gunicorn masters and their workers."""
    pids = []
    for host in cluster.hosts:
        pids.append(host.process.pid)
        children = Path(f"/proc/{host.process.pid}/task/{host.process.pid}/children").read_text()
        pids += [int(pid) for pid in children.split()]
    return pids


def csrf(client: httpx.AsyncClient) -> str:
    return client.cookies.get("csrftoken", "")


async def timed(level: Level, kind: str, request) -> httpx.Response | None:
    started = time.perf_counter()
    try:
        response = await request
    except httpx.HTTPError:
        level.errors[kind] += 1
        return None
    took = (time.perf_counter() - started) * 1000
    level.latencies[kind].append(took)
    level.slowest.append((took, kind, str(response.request.url.path), started - level.started))
    level.slowest.sort(reverse=True)
    del level.slowest[SLOWEST_SHOWN:]
    if response.status_code >= 400:
        level.errors[kind] += 1
        return None
    return response


async def sign_up(base_url: str, username: str) -> httpx.Cookies:
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:
        await client.get("/accounts/signup/")
        response = await client.post(
            "/accounts/signup/",
            data={"username": username, "password1": PASSWORD, "password2": PASSWORD},
            headers={"X-CSRFToken": csrf(client)},
        )
        if response.status_code != 302:
            raise RuntimeError(f"sign-up of {username} failed: {response.status_code}")
        return client.cookies


async def study(client: httpx.AsyncClient, username: str, cards: list[str], level: Level) -> None:
    rng = random.Random(username)
    deadline = time.monotonic() + level.seconds
    think = level.think_s

    async def wait() -> None:
        await asyncio.sleep(rng.expovariate(1 / think) if think else 0)

    index = rng.randrange(len(cards))
    while time.monotonic() < deadline:
        card = cards[index % len(cards)]
        index += 1
        await wait()  # the students do not all press at the same moment
        if await timed(level, "card", client.get(card)) is None:
            continue
        await wait()
        htmx = {"X-CSRFToken": csrf(client), "HX-Request": "true"}
        shown = await timed(
            level,
            "show",
            client.post(card + "show/", data={"answer": f"{username} {index}"}, headers=htmx),
        )
        if shown is None:
            continue
        await wait()
        rated = await timed(
            level, "rate", client.post(card + "rate/", data={"rating": rng.randint(1, 4)}, headers=htmx)
        )
        if rated is not None and "Saved" in rated.text:
            level.acknowledged[username] += 1
        if index % 5 == 0:
            await wait()
            await timed(level, "review", client.get("/review/"))
        if index % 10 == 0:
            await wait()
            await timed(level, "progress", client.get("/progress/"))


async def course_cards(base_url: str) -> list[str]:
    """Every card of the course, in order, as the home page and the lessons link to them."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        home = (await client.get("/")).text
        lessons = list(dict.fromkeys(re.findall(r'href="(/learn/[^"/]+/[^"/]+/)"', home)))
        cards: list[str] = []
        for lesson in lessons:
            page = (await client.get(lesson)).text
            cards += [card for card in dict.fromkeys(re.findall(r'href="(/learn/[^"]+/step-\d+/)"', page))]
        return list(dict.fromkeys(cards))


def stored_ratings(database_url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT u.username, count(*) FROM quiz_review r JOIN auth_user u ON u.id = r.user_id"
            " WHERE u.username LIKE 'study-%' GROUP BY u.username"
        ).fetchall()
    return dict(rows)


async def run_levels(
    base_url: str, database_url: str, counts: list[int], args: argparse.Namespace, host_pids: list[int]
) -> list[tuple]:
    cookies: dict[str, httpx.Cookies] = {}
    acknowledged: dict[str, int] = defaultdict(int)
    cards = await course_cards(base_url)
    rows = []
    gate = asyncio.Semaphore(SIGNUPS_AT_ONCE)

    async def signed_up(name: str) -> None:
        async with gate:
            cookies[name] = await sign_up(base_url, name)

    for count in counts:
        names = [f"study-{index:04d}" for index in range(count)]
        new = [name for name in names if name not in cookies]
        started = time.perf_counter()
        await asyncio.gather(*(signed_up(name) for name in new))
        signup_s = time.perf_counter() - started
        # Every student's client made before the clock starts: an httpx client takes about 17 ms to
        # make (its TLS context), and 500 made as the students began held the event loop for 8.8 s,
        # after which 248 students whose first wait had passed asked for a card at once.
        clients = {
            name: httpx.AsyncClient(base_url=base_url, cookies=cookies[name], timeout=60) for name in names
        }
        level = Level(count, args.seconds, args.think_s)
        load_before = os.getloadavg()[0]
        cpu_before = cpu_by_part(host_pids)
        try:
            await asyncio.gather(*(study(clients[name], name, cards, level) for name in names))
        finally:
            await asyncio.gather(*(client.aclose() for client in clients.values()))
        cpu_after = cpu_by_part(host_pids)
        level.cpu_ms_per_page = {
            part: (cpu_after[part] - cpu_before[part]) * 1000 / max(1, level.pages) for part in cpu_after
        }
        for name, ratings in level.acknowledged.items():
            acknowledged[name] += ratings
        stored = stored_ratings(database_url)
        lost = sum(max(0, ratings - stored.get(name, 0)) for name, ratings in acknowledged.items())
        rows.append(
            (
                level,
                len(new),
                signup_s,
                lost,
                sum(level.acknowledged.values()),
                load_before,
                os.getloadavg()[0],
            )
        )
    return rows


def print_rows(target: str, rows: list[tuple], seconds: float, think_s: float) -> None:
    print(f"\n{target}: {seconds:.0f} s per level, think time {think_s} s mean")
    header = " | ".join(f"{kind} p50/p99 ms" for kind in KINDS)
    print(f"| students | load avg | sign-ups (s) | pages/s | {header} | errors | ratings | lost |")
    print("| ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in KINDS) + " | ---: | ---: | ---: |")
    carried = 0
    for level, new, signup_s, lost, ratings, load_before, load_after in rows:
        cells = " | ".join(
            f"{percentile(level.latencies[kind], 50):.0f} / {percentile(level.latencies[kind], 99):.0f}"
            for kind in KINDS
        )
        errors = sum(level.errors.values())
        print(
            f"| {level.students} | {load_before:.1f} to {load_after:.1f} | {new} in {signup_s:.0f} | "
            f"{level.pages / seconds:.1f} | {cells} | {errors} | {ratings} | {lost} |"
        )
        if level.worst_p99() <= P99_TARGET_MS and errors == 0:
            carried = max(carried, level.students)
    print(
        f"students carried at p99 <= {P99_TARGET_MS:.0f} ms on every page kind: {carried or 'none measured'}"
    )
    for level, *_ in rows:
        split = ", ".join(f"{part} {ms:.2f}" for part, ms in level.cpu_ms_per_page.items())
        print(f"CPU ms a page at {level.students} students: {split}")
    for level, *_ in rows:
        slowest = "; ".join(
            f"{ms:.0f} ms {kind} {path} at {at:.1f} s" for ms, kind, path, at in level.slowest
        )
        print(f"slowest at {level.students} students (seconds into the level): {slowest}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", default="50,200,500")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think-s", type=float, default=5.0)
    parser.add_argument("--hosts", default="1,2")
    parser.add_argument("--workers-per-host", type=int, default=3)
    args = parser.parse_args()
    counts = [int(count) for count in args.students.split(",")]
    lost = 0
    for hosts in [int(hosts) for hosts in args.hosts.split(",")]:
        with running_cluster(
            hosts=hosts,
            workers_per_host=args.workers_per_host,
            database_name="felab_study_bench",
            login_limit=0,
            # Each student's writes counted as a deployed site counts them (every student
            # shares the bench's one address, so the limit per address stays off).
            learner_write_limit=LEARNER_WRITE_LIMIT,
        ) as cluster:
            # One host is asked directly; two through nginx, as docs/deploy.md runs them.
            url, target = (
                (cluster.hosts[0].url, "one gunicorn host, PostgreSQL and Redis")
                if hosts == 1
                else (cluster.url, f"{hosts} hosts behind nginx, PostgreSQL and Redis")
            )
            rows = asyncio.run(run_levels(url, cluster.database_url, counts, args, host_processes(cluster)))
            print_rows(f"{target}, {args.workers_per_host} workers each", rows, args.seconds, args.think_s)
            lost += sum(row[3] for row in rows)
    print("\nevery acknowledged rating is stored" if not lost else f"\n{lost} RATINGS LOST")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())

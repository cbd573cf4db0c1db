"""The cluster proofs as functions, each returning its row of numbers: the short cluster test
runs them small, bench/bench_cluster.py runs them at full size and prints the tables."""

from __future__ import annotations

import asyncio
import socket
import statistics
import threading
import time
import urllib.request
from dataclasses import dataclass

import httpx

from tests.support.cluster import Cluster
from tests.support.load import duplicated_showings, run_load, stored_reviews


# ------------------------------------------------------------------ 1. load with a host killed
@dataclass
class LoadRow:
    sent: int
    acknowledged: int
    stored: int
    lost: int
    duplicated: int
    server_errors: int  # 5xx other than the killed host's cut requests
    cut: int  # 502 from nginx for requests the killed host held, and cut connections
    seconds: float


def load_with_a_host_killed(cluster: Cluster, students: int, ratings: int, victim: int = 0) -> LoadRow:
    report = run_load(cluster.url, students, ratings, during=cluster.hosts[victim].kill, after_s=1.0)
    stored = stored_reviews(cluster.database_url)  # per student, from the answer each typed
    lost = sum(max(0, acked - stored.get(key, 0)) for key, acked in report.students.items())
    cut_by_kill = report.statuses.get(502, 0)
    return LoadRow(
        sent=report.sent,
        acknowledged=report.acknowledged,
        stored=sum(stored.values()),
        lost=lost,
        duplicated=duplicated_showings(cluster.database_url),
        server_errors=report.server_errors - cut_by_kill,
        cut=cut_by_kill + report.transport_errors,
        seconds=report.seconds,
    )


# ------------------------------------------------------------------ 2. slow clients
@dataclass
class SlowRow:
    target: str
    connections: int
    seconds: float
    probes: int
    failed: int  # no answer within 5 s
    p50_ms: float
    p99_ms: float
    max_ms: float


def _dribble(host: str, port: int, count: int, stop: threading.Event, opened: threading.Event) -> None:
    """Hold `count` connections, each sending one more header line every 3 s, reopening any
    the server closes (as an attacker would)."""
    sockets: list[socket.socket | None] = [None] * count

    def connected() -> socket.socket | None:
        try:
            sock = socket.create_connection((host, port), timeout=5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            return sock
        except OSError:
            return None

    while not stop.is_set():
        for index in range(count):
            sock = sockets[index]
            try:
                if sock is None:
                    raise OSError
                sock.sendall(b"X-Dribble: 1\r\n")
            except OSError:
                if sock is not None:
                    sock.close()
                sockets[index] = connected()
        opened.set()
        stop.wait(3.0)
    for sock in sockets:
        if sock is not None:
            sock.close()


def slow_clients(url: str, target: str, connections: int, hold_s: float) -> SlowRow:
    host, port = url.removeprefix("http://").split(":")
    stop = threading.Event()
    opened = threading.Event()
    dribbler = threading.Thread(
        target=_dribble, args=(host, int(port), connections, stop, opened), daemon=True
    )
    dribbler.start()
    opened.wait(timeout=60)  # every connection tried once before probing
    latencies: list[float] = []
    failed = 0
    deadline = time.monotonic() + hold_s
    while time.monotonic() < deadline:
        start = time.perf_counter()
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=5).read()
            latencies.append((time.perf_counter() - start) * 1000)
        except OSError:
            failed += 1
        time.sleep(0.1)
    stop.set()
    dribbler.join(timeout=30)
    ordered = sorted(latencies) or [float("inf")]
    p99 = ordered[min(len(ordered) - 1, max(0, -(-99 * len(ordered) // 100) - 1))]
    return SlowRow(
        target=target,
        connections=connections,
        seconds=hold_s,
        probes=len(latencies) + failed,
        failed=failed,
        p50_ms=statistics.median(ordered),
        p99_ms=p99 if not failed else float("inf"),
        max_ms=ordered[-1] if not failed else float("inf"),
    )


# ------------------------------------------------------------------ 3. wrong passwords
@dataclass
class PasswordRow:
    attempts: int
    passed: int  # answered by the login view (a wrong-password page), not 429
    refused: int  # 429
    other_address_passed: bool


async def _wrong_passwords(url: str, attempts: int, address: str, username: str) -> list[int]:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    limits = httpx.Limits(max_connections=attempts)
    async with httpx.AsyncClient(base_url=url, transport=transport, limits=limits, timeout=60) as client:
        await client.get("/accounts/login/")
        token = client.cookies.get("csrftoken", "")

        async def attempt(index: int) -> int:
            response = await client.post(
                "/accounts/login/",
                data={"username": username, "password": f"wrong-{index}", "csrfmiddlewaretoken": token},
            )
            return response.status_code

        return list(await asyncio.gather(*(attempt(i) for i in range(attempts))))


def wrong_passwords(cluster: Cluster, attempts: int = 120) -> PasswordRow:
    # Loopback answers on all of 127/8: two client addresses that nginx tells apart.
    statuses = asyncio.run(_wrong_passwords(cluster.url, attempts, "127.0.0.2", "nobody"))
    # Another account: the limit also counts per account tried, and "nobody" is spent.
    other = asyncio.run(_wrong_passwords(cluster.url, 1, "127.0.0.3", "somebody-else"))
    return PasswordRow(
        attempts=attempts,
        passed=sum(1 for status in statuses if status != 429),
        refused=statuses.count(429),
        other_address_passed=other == [200],
    )


# ------------------------------------------------------------------ 4. a sweep outlives its host
@dataclass
class SweepRow:
    accepted_by: str
    state_when_killed: str
    final_state: str
    levels_done: str
    seconds: float


def _run_state(cluster: Cluster, run_id: int) -> tuple[str, str]:
    import psycopg

    with psycopg.connect(cluster.database_url) as conn:
        state = conn.execute("SELECT state FROM felab_sim_run WHERE id = %s", (run_id,)).fetchone()[0]
        levels = conn.execute(
            "SELECT done, requests FROM felab_sim_runlevel WHERE run_id = %s ORDER BY conc", (run_id,)
        ).fetchall()
    return state, ", ".join(f"{done}/{requests}" for done, requests in levels)


def sweep_outlives_its_host(
    cluster: Cluster, levels: str = "1,2", max_tokens: int = 32, accepting_host: int = 0
) -> SweepRow:
    import subprocess

    from tests.support.site import PY, ROOT

    subprocess.run(
        [
            PY,
            "manage.py",
            "createsuperuser",
            "--noinput",
            "--username",
            "sweeper",
            "--email",
            "s@example.org",
        ],
        cwd=ROOT,
        env={**cluster.env, "DJANGO_SUPERUSER_PASSWORD": "a-long-sweep-password-1"},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    accepting = cluster.hosts[accepting_host]
    with httpx.Client(base_url=accepting.url, timeout=60) as client:
        client.get("/accounts/login/")
        client.post(
            "/accounts/login/",
            data={
                "username": "sweeper",
                "password": "a-long-sweep-password-1",
                "csrfmiddlewaretoken": client.cookies["csrftoken"],
            },
        )
        started = time.monotonic()
        response = client.post(
            "/sim/runs/",
            data={
                "levels": levels,
                "max_tokens": max_tokens,
                "csrfmiddlewaretoken": client.cookies["csrftoken"],
            },
        )
        location = response.headers.get("location", "")
        if response.status_code != 302 or "/sim/runs/" not in location:
            raise RuntimeError(f"the sweep did not start: {response.status_code} {response.text[:300]}")
        run_id = int(location.rstrip("/").rsplit("/", 1)[1])
    # Kill the host that accepted it once the worker is measuring: a first request is done.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state, done = _run_state(cluster, run_id)
        if state not in ("queued", "running") or any(
            not level.startswith("0/") for level in done.split(", ")
        ):
            break
        time.sleep(0.1)
    state_when_killed = _run_state(cluster, run_id)
    accepting.kill()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        page = httpx.get(f"{cluster.url}/sim/runs/{run_id}/", timeout=30)  # through nginx: the other host
        state, done = _run_state(cluster, run_id)
        if state not in ("queued", "running"):
            break
        time.sleep(0.5)
    if page.status_code != 200:
        raise RuntimeError(f"the run page answered {page.status_code}")
    return SweepRow(
        accepted_by=accepting.name,
        state_when_killed=f"{state_when_killed[0]} ({state_when_killed[1]})",
        final_state=state,
        levels_done=done,
        seconds=time.monotonic() - started,
    )

"""felab as several hosts on one machine: nginx in front of app instances (gunicorn), a task
worker, PostgreSQL and Redis, started as docs/deploy.md describes. For bench_cluster.py and
the short cluster test."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from tests.support.site import PY, ROOT, scratch_database
from tests.support.static_root import collected_static

REDIS_URL = os.environ.get("FELAB_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
# Ports this project's cluster runs may take; other work on the machine keeps clear of them.
PORT_RANGE = range(18000, 18100)


def free_port_in_range() -> int:
    for port in PORT_RANGE:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORT_RANGE.start}-{PORT_RANGE.stop - 1}")


def wait_until_up(url: str, process: subprocess.Popen | None = None, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline or (process is not None and process.poll() is not None):
                raise RuntimeError(f"{url} did not come up") from None
            time.sleep(0.2)


@dataclass
class AppHost:
    name: str
    port: int
    env: dict[str, str]
    log: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        gunicorn = str(Path(PY).with_name("gunicorn"))
        self.process = _start([gunicorn, "--config", "config/gunicorn.conf.py"], self.env, self.log)
        wait_until_up(f"{self.url}/healthz", self.process)

    def kill(self) -> None:
        """The host dies at once (SIGKILL to gunicorn and its workers), as a crashed machine would."""
        if self.process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)


@dataclass
class Cluster:
    url: str  # nginx
    env: dict[str, str]
    database_url: str
    hosts: list[AppHost] = field(default_factory=list)


def cluster_env(
    database_url: str, practice_url: str, login_limit: int, learner_write_limit: int = 0
) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_ENV": "production",
        "DJANGO_INSECURE_HTTP": "1",
        "SECRET_KEY": "cluster-only-secret-key-" + "y" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        # Each run its own keys in the shared Redis.
        "FELAB_CACHE_PREFIX": f"felab-cluster-{uuid.uuid4().hex[:12]}",
        "FELAB_TRUSTED_PROXIES": "127.0.0.1",
        "FELAB_ACCESS_LOG": os.devnull,
        "FELAB_PRACTICE_URL": practice_url,
        "FELAB_LOGIN_LIMIT": str(login_limit),
        "FELAB_SWEEP_LIMIT": "0",
        # The load checks send every student from this one address: no limit per address; the
        # limit per learner only where a check asks for it (bench_study counts it as deployed).
        "FELAB_WRITE_LIMIT": "0",
        "FELAB_LEARNER_WRITE_LIMIT": str(learner_write_limit),
        "FELAB_STATIC_ROOT": str(collected_static()),
    }
    for name in ("DJANGO_DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    return env


def render_nginx_conf(directory: Path, listen: int, upstream_ports: list[int]) -> Path:
    servers = "\n        ".join(
        f"server 127.0.0.1:{port} max_fails=1 fail_timeout=5s;" for port in upstream_ports
    )
    text = Template((ROOT / "config" / "nginx.conf.template").read_text()).safe_substitute(
        FELAB_NGINX_DIR=str(directory),
        FELAB_LISTEN=f"127.0.0.1:{listen}",
        FELAB_UPSTREAM_SERVERS=servers,
        FELAB_STATIC_ROOT=str(collected_static()),
    )
    conf = directory / "nginx.conf"
    conf.write_text(text)
    return conf


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=env, start_new_session=True, stdout=log.open("ab"), stderr=subprocess.STDOUT
    )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@contextmanager
def practice_server(step_ms: float = 18.0) -> Iterator[str]:
    """The practice server that the cluster's sweeps measure; yields its /v1 URL."""
    port = free_port_in_range()
    log = Path(tempfile.mkdtemp(prefix="felab-practice-")) / "practice.log"
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ENV", "DATABASE_URL"}}
    process = _start(
        [PY, "manage.py", "practice_server", "--port", str(port), "--step-ms", str(step_ms)], env, log
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/health", process)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        _stop(process)


@contextmanager
def running_cluster(
    hosts: int = 2,
    workers_per_host: int = 3,
    database_name: str = "felab_cluster_bench",
    practice_url: str = "http://127.0.0.1:9/v1",
    login_limit: int = 10,
    learner_write_limit: int = 0,
) -> Iterator[Cluster]:
    """Release once, then start the app hosts, one task worker and nginx; stop them all after."""
    directory = Path(tempfile.mkdtemp(prefix="felab-cluster-"))
    directory.chmod(0o755)  # nginx's workers run as nobody when started by root
    database_url = scratch_database("postgresql", database_name)
    env = cluster_env(database_url, practice_url, login_limit, learner_write_limit)
    # The release step, once, before any host starts (make release).
    for command in (["migrate", "--noinput"], ["import_lessons"]):
        subprocess.run(
            [PY, "manage.py", *command, "-v", "0"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
        )
    with ExitStack() as stack:
        app_hosts = []
        for index in range(hosts):
            port = free_port_in_range()
            host_env = {**env, "FELAB_BIND": f"127.0.0.1:{port}", "FELAB_WORKERS": str(workers_per_host)}
            host = AppHost(f"app{index}", port, host_env, directory / f"app{index}.log")
            stack.callback(host.stop)
            host.start()
            app_hosts.append(host)
        worker = _start(
            [PY, "manage.py", "db_worker", "--no-reload", "--interval", "0.2", "-v", "0"],
            env,
            directory / "worker.log",
        )
        stack.callback(_stop, worker)
        listen = free_port_in_range()
        conf = render_nginx_conf(directory, listen, [host.port for host in app_hosts])
        nginx = _start(
            [NGINX, "-p", str(directory), "-c", str(conf), "-g", "daemon off;"], env, directory / "nginx.out"
        )
        stack.callback(_stop, nginx)
        url = f"http://127.0.0.1:{listen}"
        wait_until_up(f"{url}/healthz", nginx)
        yield Cluster(url, env, database_url, app_hosts)
    shutil.rmtree(directory, ignore_errors=True)

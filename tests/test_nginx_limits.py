"""config/nginx.conf.template as deployed: nginx accepts it (`nginx -t`), and it limits each
client address's requests in front of the app's own limits, answering 429 with Retry-After
itself, while static files stay unlimited."""

import http.client
import re
import shutil
import subprocess
import time
from pathlib import Path
from string import Template

import pytest

from tests.limits import free_port

ROOT = Path(__file__).resolve().parent.parent
# Each request is answered at once (the app host's port is closed: 502), so a client asks far
# faster than the 50 a second the template allows, and its burst of 500 runs out well before this.
MOST_REQUESTS = 5_000

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is missing (make nginx)")


def rendered(directory: Path, listen: int, app_port: int) -> Path:
    """The template filled in as docs/deploy.md's envsubst command fills it."""
    static = directory / "static"
    static.mkdir()
    (static / "site.css").write_text("body {}\n")
    text = Template((ROOT / "config" / "nginx.conf.template").read_text()).safe_substitute(
        FELAB_NGINX_DIR=str(directory),
        FELAB_LISTEN=f"127.0.0.1:{listen}",
        FELAB_UPSTREAM_SERVERS=f"server 127.0.0.1:{app_port} max_fails=1 fail_timeout=5s;",
        FELAB_STATIC_ROOT=str(static),
    )
    conf = directory / "nginx.conf"
    conf.write_text(text)
    return conf


def nginx(directory: Path, conf: Path, *arguments: str) -> list[str]:
    return ["nginx", "-e", str(directory / "error.log"), "-p", str(directory), "-c", str(conf), *arguments]


def test_nginx_accepts_the_template_with_its_limits(tmp_path):
    conf = rendered(tmp_path, free_port(), free_port())
    checked = subprocess.run(nginx(tmp_path, conf, "-t"), capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    text = conf.read_text()
    assert re.search(r"limit_req_zone \$felab_client zone=felab_requests:\S+ rate=\d+r/s;", text)
    assert re.search(r"limit_req zone=felab_requests burst=\d+ nodelay;", text)
    assert re.search(r"limit_conn felab_connections \d+;", text)


def test_one_address_asking_too_fast_is_answered_429_by_nginx(tmp_path):
    listen = free_port()
    conf = rendered(tmp_path, listen, free_port())
    server = subprocess.Popen(nginx(tmp_path, conf, "-g", "daemon off;"), stderr=subprocess.PIPE)
    try:
        connection = _connected(listen, server)
        statuses, refused = [], None
        while len(statuses) < MOST_REQUESTS and refused is None:
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            body = response.read()
            statuses.append(response.status)
            if response.status == 429:
                refused, refusal_text = response, body.decode()
        assert refused is not None, f"no 429 in {len(statuses)} requests"
        assert len(statuses) > 500  # the burst passed first
        assert set(statuses[:-1]) == {502}  # the app host's answer (closed) until the limit
        assert refused.getheader("Retry-After") == "1" and "Too many requests" in refusal_text
        connection.request("GET", "/static/site.css")
        static = connection.getresponse()
        static.read()
        # Static files are not counted (403 where nginx's worker may not read the test's folder).
        assert static.status in (200, 403)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _connected(port: int, server: subprocess.Popen, host: str = "127.0.0.1") -> http.client.HTTPConnection:
    """A keep-alive connection, once nginx listens (it starts in milliseconds)."""
    for _ in range(500):
        if server.poll() is not None:
            raise RuntimeError(f"nginx stopped: {server.stderr.read().decode()}")
        connection = http.client.HTTPConnection(host, port, timeout=10)
        try:
            connection.connect()
            return connection
        except ConnectionRefusedError:
            time.sleep(0.02)
    raise RuntimeError("nginx did not listen")


def test_nginx_counts_an_ipv6_client_by_its_64_and_an_ipv4_client_by_its_address(tmp_path):
    """The template's key for its limits, answered back by a server of the test's own: 8 bytes
    (a /64) for ::1, the 4 bytes of 127.0.0.1."""
    template = rendered(tmp_path, free_port(), free_port()).read_text()
    key_map = re.search(r"\n    map \$binary_remote_addr \$felab_client \{.*?\n    \}\n", template, re.S)
    assert key_map, "no map for the limits' key"
    port = free_port()
    conf = tmp_path / "key.conf"
    conf.write_text(
        f"pid {tmp_path}/key.pid;\nevents {{}}\nhttp {{\n    access_log off;\n{key_map[0]}"
        f"    server {{\n        listen 127.0.0.1:{port};\n        listen [::1]:{port};\n"
        "        location / { return 200 $felab_client; }\n    }\n}\n"
    )
    server = subprocess.Popen(nginx(tmp_path, conf, "-g", "daemon off;"), stderr=subprocess.PIPE)
    try:
        answers = {}
        for host in ("127.0.0.1", "::1"):
            connection = _connected(port, server, host)
            connection.request("GET", "/")
            answers[host] = connection.getresponse().read()
        assert answers == {"127.0.0.1": bytes([127, 0, 0, 1]), "::1": bytes(8)}
    finally:
        server.terminate()
        server.wait(timeout=30)

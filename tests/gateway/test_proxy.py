"""deploy/nginx/nginx.conf with Debian's nginx in front of gunicorn: slow clients, forwarded addresses, static files.

The shipped file runs as is but for the lines a deployment adapts (marked "deployment:" in it): the
upstream, the listening addresses, the certificate and the static directory. gunicorn runs with one
sync worker and production settings (EVERGREEN_DEBUG=0), trusting X-Forwarded-For from 127.0.0.1,
the address nginx connects from; clients connect from other loopback addresses (127.0.0.2 …). Two
instances behind one nginx prove the README's scaling out: a publish reaches both, the limit is shared.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from knowledge.models import Entry, Namespace
from knowledge.services.actors import system_actor
from knowledge.services.entries import entry_retire
from tests.services import missing
from tests.worker import ROOT, free_port, gunicorn, wait_for

CONFIG = ROOT / "deploy" / "nginx" / "nginx.conf"
HOST = "evergreen.test"
PRODUCTION = {
    "EVERGREEN_DEBUG": "0",
    "EVERGREEN_SECRET_KEY": "a-long-random-test-secret-key-that-is-only-used-by-the-proxy-tests-0123456789",
    "EVERGREEN_ALLOWED_HOSTS": HOST,
    "EVERGREEN_TRUSTED_PROXIES": "127.0.0.1",
    "EVERGREEN_RATE_LIMIT": "3/hour",
}


@pytest.fixture
def nginx_installed() -> None:
    for tool in ("nginx", "openssl"):
        if shutil.which(tool) is None:
            missing(f"needs {tool} (apt-get install nginx openssl)")


def adapted(config: str, *, upstream: int, http: int, https: int, tls: Path, static: Path, run: Path) -> str:
    """The shipped configuration with this machine's ports and paths; fails if a marked line moved."""
    replacements = {
        "server web:8000 ": f"server 127.0.0.1:{upstream} ",
        "listen 80 default_server;": f"listen 127.0.0.1:{http} default_server;",
        "listen 443 ssl default_server;": f"listen 127.0.0.1:{https} ssl default_server;",
        "/etc/nginx/tls/fullchain.pem": str(tls / "fullchain.pem"),
        "/etc/nginx/tls/privkey.pem": str(tls / "privkey.pem"),
        "alias /srv/static/;": f"alias {static}/;",
        "pid /tmp/nginx.pid;": f"pid {run / 'nginx.pid'};",
    }
    for old, new in replacements.items():
        assert config.count(old) == 1, f"{old!r} is no longer in deploy/nginx/nginx.conf; adapt this test"
        config = config.replace(old, new)
    # The test's files live in pytest's private temporary directory, which nginx's default
    # unprivileged worker user cannot read; the container serves a world-readable volume.
    return "user root;\n" + config


def self_signed(directory: Path) -> Path:
    directory.mkdir()
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={HOST}"),
            *("-keyout", str(directory / "privkey.pem"), "-out", str(directory / "fullchain.pem")),
        ],
        check=True,
        capture_output=True,
    )
    return directory


@dataclass
class Stack:
    upstream: int
    http: int
    https: int

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.https}{path}"


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def nginx(config: Path, log: Path) -> Iterator[None]:
    with log.open("ab") as out:
        process = subprocess.Popen(["nginx", "-c", str(config), "-g", "daemon off;"], stdout=out, stderr=out)
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)


def proxy_config(tmp_path: Path, *, upstreams: list[int], http: int, https: int, static: Path) -> Path:
    """The shipped configuration for this machine, one `server` line per instance (as when scaling out),
    written to tmp_path; the rate-limit windows of the shared Redis are emptied for the test."""
    text = adapted(
        CONFIG.read_text(),
        upstream=upstreams[0],
        http=http,
        https=https,
        tls=self_signed(tmp_path / "tls"),
        static=static,
        run=tmp_path,
    )
    first = f"server 127.0.0.1:{upstreams[0]} "
    more = "".join(f"server 127.0.0.1:{port} max_fails=3 fail_timeout=10s;\n        " for port in upstreams[1:])
    config = tmp_path / "nginx.conf"
    config.write_text(text.replace(first, more + first))
    shared = redis.Redis.from_url(os.environ["REDIS_URL"])
    for key in shared.scan_iter("evergreen:rl:*"):
        shared.delete(key)
    return config


@pytest.fixture
def stack(nginx_installed: None, demo: Namespace, tmp_path: Path) -> Iterator[Stack]:
    upstream, http, https = free_port(), free_port(), free_port()
    static = tmp_path / "static"
    (static / "evergreen").mkdir(parents=True)
    (static / "evergreen" / "site.css").write_text("body { color: green; }\n")
    config = proxy_config(tmp_path, upstreams=[upstream], http=http, https=https, static=static)
    with gunicorn(upstream, tmp_path / "gunicorn.log", env=PRODUCTION), nginx(config, tmp_path / "nginx.log"):
        wait_for(lambda: accepts(upstream) and accepts(https), what="gunicorn and nginx")
        yield Stack(upstream=upstream, http=http, https=https)


@dataclass
class Pair:
    """Two gunicorn instances (one sync worker each) behind one nginx, as two web containers would be."""

    upstreams: tuple[int, int]
    https: int

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.https}{path}"


@contextmanager
def pair_of_instances(tmp_path: Path, env: dict[str, str]) -> Iterator[Pair]:
    first, second, http, https = free_port(), free_port(), free_port(), free_port()
    config = proxy_config(tmp_path, upstreams=[first, second], http=http, https=https, static=tmp_path)
    with (
        gunicorn(first, tmp_path / "first.log", env=env),
        gunicorn(second, tmp_path / "second.log", env=env),
        nginx(config, tmp_path / "nginx.log"),
    ):
        wait_for(lambda: accepts(first) and accepts(second) and accepts(https), what="two gunicorns and nginx")
        yield Pair(upstreams=(first, second), https=https)


def read_until_closed(conn: socket.socket) -> bytes:
    data = b""
    while chunk := conn.recv(4096):
        data += chunk
    return data


def client_from(address: str) -> httpx.Client:
    """A client connecting from another loopback address (Linux routes all of 127.0.0.0/8 locally)."""
    transport = httpx.HTTPTransport(local_address=address, verify=False)
    return httpx.Client(transport=transport, headers={"Host": HOST}, timeout=30)


@pytest.mark.usefixtures("nginx_installed")
def test_the_shipped_configuration_passes_nginx_t(tmp_path: Path) -> None:
    config = tmp_path / "nginx.conf"
    tls = self_signed(tmp_path / "tls")
    config.write_text(
        adapted(CONFIG.read_text(), upstream=8000, http=8080, https=8443, tls=tls, static=tmp_path, run=tmp_path)
    )

    result = subprocess.run(["nginx", "-t", "-c", str(config)], capture_output=True, text=True, check=False)

    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_slow_clients_hold_nginx_connections_not_the_only_gunicorn_worker(stack: Stack) -> None:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    slow = []
    for _ in range(4):  # slowloris: headers that never end
        raw = socket.create_connection(("127.0.0.1", stack.https), timeout=60)
        conn = context.wrap_socket(raw, server_hostname=HOST)
        conn.sendall(f"GET /llms.txt HTTP/1.1\r\nHost: {HOST}\r\nX-Slow: 1\r\n".encode())
        slow.append(conn)

    with client_from("127.0.0.2") as client:
        answer = client.get(stack.url("/llms.txt"))

    assert answer.status_code == 200 and answer.text.startswith("# ")
    # nginx gives up on the unfinished headers (client_header_timeout) and closes the connection.
    for conn in slow:
        assert b"200 OK" not in read_until_closed(conn)
        conn.close()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_limiter_counts_the_address_nginx_saw_and_ignores_forwarded_for_from_others(stack: Stack) -> None:
    def codes(client: httpx.Client, url: str, **headers: str) -> list[int]:
        return [
            client.get(url, headers={"X-Forwarded-For": f"198.51.100.{n}", **headers}).status_code for n in range(4)
        ]

    with client_from("127.0.0.2") as first, client_from("127.0.0.3") as second, client_from("127.0.0.4") as direct:
        through_proxy = codes(first, stack.url("/llms.txt"))
        other_client = second.get(stack.url("/llms.txt")).status_code
        # Straight to gunicorn, rotating X-Forwarded-For (issue 9: 200 of 200 got through with a hop count).
        to_gunicorn = codes(direct, f"http://127.0.0.1:{stack.upstream}/llms.txt", **{"X-Forwarded-Proto": "https"})

    assert through_proxy == [200, 200, 200, 429]
    assert other_client == 200  # its own window: nginx's entry, not nginx's address, is the client
    assert to_gunicorn == [200, 200, 200, 429]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_nginx_serves_static_files_and_the_health_check_passes_the_allowed_hosts(stack: Stack) -> None:
    with client_from("127.0.0.2") as client:
        css = client.get(stack.url("/static/evergreen/site.css"))
        redirect = client.get(f"http://127.0.0.1:{stack.http}/llms.txt")

    assert css.status_code == 200 and css.text == "body { color: green; }\n"
    assert css.headers["Cache-Control"] == "max-age=604800"
    assert redirect.status_code == 301 and redirect.headers["Location"] == f"https://{HOST}/llms.txt"

    check = [sys.executable, "-m", "evergreen_site.healthcheck", f"http://127.0.0.1:{stack.upstream}/healthz"]
    env: dict[str, Any] = {**os.environ, **PRODUCTION}
    healthy = subprocess.run(check, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert healthy.returncode == 0, healthy.stderr
    # What the old health check did: ask as 127.0.0.1, which production settings refuse.
    with httpx.Client(timeout=30) as plain:
        assert plain.get(f"http://127.0.0.1:{stack.upstream}/healthz").status_code == 400


def served_release(port: int) -> str:
    """The release one instance serves, asked directly (as the proxy does) without the limiter."""
    with httpx.Client(timeout=30) as direct:
        answer = direct.get(f"http://127.0.0.1:{port}/llms.txt", headers={"Host": HOST, "X-Forwarded-Proto": "https"})
    return answer.headers.get("Evergreen-Release", "")


def serves(port: int, sequence: str) -> bool:
    return served_release(port) == sequence


def active_sequence(namespace: Namespace) -> str:
    release = Namespace.objects.select_related("active_release").get(pk=namespace.pk).active_release
    assert release is not None
    return str(release.sequence)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_publish_becomes_visible_on_both_instances_behind_the_proxy(
    nginx_installed: None, demo: Namespace, tmp_path: Path
) -> None:
    before = active_sequence(demo)
    with pair_of_instances(tmp_path, {**PRODUCTION, "EVERGREEN_RATE_LIMIT": "0"}) as pair:
        assert [served_release(port) for port in pair.upstreams] == [before, before]

        entry = Entry.objects.filter(namespace=demo, retired_at__isnull=True).order_by("number").first()
        assert entry is not None
        entry_retire(entry=entry, actor=system_actor(), reason="Withdrawn.", check_permission=False)
        after = active_sequence(demo)
        assert after != before

        for port in pair.upstreams:  # each instance notices the new active release on its own
            wait_for(partial(serves, port, after), what=f"release {after} on port {port}")
        with client_from("127.0.0.2") as client:
            through_proxy = {client.get(pair.url("/llms.txt")).headers["Evergreen-Release"] for _ in range(4)}
    assert through_proxy == {after}


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_instances_behind_the_proxy_share_one_limit(nginx_installed: None, demo: Namespace, tmp_path: Path) -> None:
    logged = {**PRODUCTION, "EVERGREEN_ACCESS_LOG": "1", "EVERGREEN_LOG_LEVEL": "INFO"}
    with pair_of_instances(tmp_path, logged) as pair, client_from("127.0.0.2") as client:
        # nginx takes turns between the two instances: each alone would admit 3 of these.
        codes = [client.get(pair.url("/llms.txt")).status_code for _ in range(6)]
    assert codes == [200, 200, 200, 429, 429, 429]
    logs = [(tmp_path / log).read_text() for log in ("first.log", "second.log")]
    answered = [
        sum(" GET /llms.txt " in line for line in log.splitlines() if "evergreen.access" in line) for log in logs
    ]
    assert answered == [3, 3]  # both instances answered from the one shared window
    assert all(" GET /llms.txt 429" in log for log in logs)  # and both refused once it was spent

"""The sliding-window rate limit: 120/min per client per namespace, 429 with Retry-After, shared through Redis.

The tests count requests in windows of an hour, so no run is slow enough for a window to slide under them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from evergreen_site.settings.env import Rate, RateSpecError, parse_rate
from gateway.ratelimit import LocalWindow, SlidingWindowLimiter
from knowledge.models import Namespace
from tests import worker
from tests.configure import configure

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("spec", "rate"),
    [
        ("120/min", Rate(120, 60)),
        ("10/s", Rate(10, 1)),
        ("1000/hour", Rate(1000, 3600)),
        ("30/10s", Rate(30, 10)),
        ("0", Rate(0, 60)),
        ("off", Rate(0, 60)),
    ],
)
def test_rates_parse(spec: str, rate: Rate) -> None:
    assert parse_rate(spec) == rate


@pytest.mark.parametrize("spec", ["", "fast", "120/fortnight", "12O/min"])
def test_bad_rates_are_refused(spec: str) -> None:
    with pytest.raises(RateSpecError):
        parse_rate(spec)


def limited(settings: Any, spec: str) -> None:
    configure(settings, rate_limit=spec)


@pytest.mark.django_db
def test_the_121st_request_in_a_window_gets_429_with_retry_after(client: Any, demo: Namespace, settings: Any) -> None:
    limited(settings, "120/hour")
    answers = [client.get("/llms.txt") for _ in range(120)]
    refused = client.get("/api/context")

    assert {a.status_code for a in answers} == {200}
    assert answers[0]["RateLimit-Policy"] == '"default";q=120;w=3600'
    assert answers[0]["RateLimit"].startswith('"default";r=119;t=')
    assert answers[-1]["RateLimit"].startswith('"default";r=0;t=')
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert refused["RateLimit"].startswith('"default";r=0;t=')
    assert refused["Cache-Control"] == "no-store"
    assert refused.json()["error"]["code"] == "rate_limited"


@pytest.mark.django_db
def test_x_forwarded_for_does_not_dodge_the_limit(client: Any, demo: Namespace, settings: Any) -> None:
    limited(settings, "3/hour")
    codes = [client.get("/llms.txt", headers={"X-Forwarded-For": f"10.0.0.{n}"}).status_code for n in range(4)]

    assert codes == [200, 200, 200, 429]


@pytest.mark.django_db
def test_trusted_proxies_make_the_forwarded_address_the_client(client: Any, demo: Namespace, settings: Any) -> None:
    limited(settings, "2/hour")
    configure(settings, trusted_proxies=1)

    def get(forwarded: str) -> int:
        return int(client.get("/llms.txt", headers={"X-Forwarded-For": forwarded}).status_code)

    assert [get("1.1.1.1"), get("1.1.1.1"), get("1.1.1.1")] == [200, 200, 429]
    assert get("spoofed, 2.2.2.2") == 200  # the proxy's own entry (rightmost) counts, not what the client sent
    assert get("9.9.9.9, 1.1.1.1") == 429


@pytest.mark.django_db
def test_a_namespace_limit_overrides_the_global_one_and_windows_are_per_namespace(
    client: Any, alpha: Namespace, beta: Namespace, settings: Any
) -> None:
    limited(settings, "120/hour")
    alpha.rate_limit = "2/hour"
    alpha.save(update_fields=["rate_limit"])

    assert [client.get("/t/alpha/llms.txt").status_code for _ in range(3)] == [200, 200, 429]
    assert client.get("/t/beta/llms.txt").status_code == 200
    assert client.get("/t/beta/llms.txt")["RateLimit-Policy"] == '"default";q=120;w=3600'


@pytest.mark.django_db
def test_zero_turns_the_limit_off(client: Any, demo: Namespace, settings: Any) -> None:
    limited(settings, "0")
    answers = [client.get("/llms.txt") for _ in range(130)]

    assert {a.status_code for a in answers} == {200}
    assert "RateLimit" not in answers[-1]


@pytest.mark.django_db
def test_unknown_namespaces_are_limited_too(client: Any, demo: Namespace, settings: Any) -> None:
    limited(settings, "2/hour")

    assert [client.get("/t/nope/llms.txt").status_code for _ in range(3)] == [404, 404, 429]


@pytest.mark.django_db
def test_when_redis_is_down_the_api_keeps_serving_and_limits_per_process(
    client: Any, demo: Namespace, settings: Any
) -> None:
    limited(settings, "2/hour")
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    local = SlidingWindowLimiter()
    from gateway import ratelimit

    original = ratelimit.limiter
    ratelimit.limiter = local
    try:
        codes = [client.get("/llms.txt").status_code for _ in range(3)]
    finally:
        ratelimit.limiter = original

    assert codes == [200, 200, 429]


@pytest.mark.services
def test_the_redis_script_admits_exactly_the_limit_in_a_window(settings: Any) -> None:
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    for key in client.scan_iter("evergreen:rl:*scripted*"):
        client.delete(key)
    limiter = SlidingWindowLimiter()
    rate = Rate(5, 3600)

    decisions = [limiter.hit(scope="scripted", client="c1", rate=rate) for _ in range(7)]

    assert [d.admitted for d in decisions if d] == [True] * 5 + [False] * 2
    assert [d.remaining for d in decisions if d][:5] == [4, 3, 2, 1, 0]
    assert all(1 <= d.reset <= 3600 for d in decisions if d)
    key = next(iter(client.scan_iter("evergreen:rl:*scripted*")))
    assert 0 < client.pttl(key) <= 3_600_000
    assert limiter.hit(scope="scripted", client="c2", rate=rate).admitted  # type: ignore[union-attr]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def gunicorn(port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """One gunicorn process (one sync worker) on the test database and the shared Redis."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base",
        "DATABASE_URL": worker.test_database_url(),
        "EVERGREEN_DEBUG": "1",
        "EVERGREEN_RATE_LIMIT": "120/hour",
    }
    command = [sys.executable, "-m", "gunicorn", "evergreen_site.wsgi", "-w", "1", "-b", f"127.0.0.1:{port}"]
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_worker_processes_share_one_window(demo: Namespace, tmp_path: Path) -> None:
    """At most 120 requests in the window across two processes; the 121st, on either, gets 429 + Retry-After."""
    ports = [free_port(), free_port()]
    with gunicorn(ports[0], tmp_path / "a.log"), gunicorn(ports[1], tmp_path / "b.log"):
        urls = [f"http://127.0.0.1:{port}/llms.txt" for port in ports]

        def up(url: str) -> bool:
            try:
                return httpx.get(url.replace("llms.txt", "robots.txt"), timeout=2).status_code in {200, 429}
            except httpx.HTTPError:
                return False

        for url in urls:
            worker.wait_for(partial(up, url), timeout=60, what=f"gunicorn at {url}")
        shared = redis.Redis.from_url(os.environ["REDIS_URL"])
        for key in shared.scan_iter("evergreen:rl:*"):
            shared.delete(key)
        with httpx.Client(timeout=10) as http:
            answers = [http.get(urls[n % 2]) for n in range(130)]

    admitted = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code == 429]
    assert len(admitted) == 120
    assert len(refused) == 10
    assert {a.url.port for a in refused} == set(ports)
    assert all(1 <= int(a.headers["Retry-After"]) <= 3600 for a in refused)


def test_the_local_window_forgets_idle_clients_instead_of_growing() -> None:
    window = LocalWindow(max_keys=2)
    window.hit("a", Rate(5, 60))
    window.hit("b", Rate(5, 60))
    window._hits["a"][-1] -= 7200  # idle for two hours

    window.hit("c", Rate(5, 60))

    assert set(window._hits) == {"b", "c"}

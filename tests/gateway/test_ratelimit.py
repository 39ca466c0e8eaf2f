"""The sliding-window rate limit: 120/min per client per namespace, 429 with Retry-After, shared through Redis.

The tests count requests in windows of an hour, so no run is slow enough for a window to slide under them.
A slot is freed up to one lease (gateway.leases.LEASE_SECONDS) after its window, so waits may be that much longer.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from functools import partial
from ipaddress import ip_network
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from evergreen_site.settings.env import Rate, RateSpecError, parse_rate
from gateway.leases import LEASE_SECONDS
from gateway.ratelimit import KEY_PREFIX, LocalWindow, SlidingWindowLimiter
from knowledge.models import Namespace
from tests import worker
from tests.configure import configure

ROOT = Path(__file__).resolve().parents[2]
LONGEST_WAIT = 3600 + math.ceil(LEASE_SECONDS)  # an hour's window, and the lease that counts a slot a little longer


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
    assert 1 <= int(refused["Retry-After"]) <= LONGEST_WAIT
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
    configure(settings, trusted_proxies=(ip_network("10.0.0.0/8"),))

    def get(forwarded: str) -> int:
        via_proxy = {"REMOTE_ADDR": "10.1.2.3"}
        return int(client.get("/llms.txt", headers={"X-Forwarded-For": forwarded}, **via_proxy).status_code)

    assert [get("1.1.1.1"), get("1.1.1.1"), get("1.1.1.1")] == [200, 200, 429]
    assert get("spoofed, 2.2.2.2") == 200  # the proxy's own entry (rightmost) counts, not what the client sent
    assert get("9.9.9.9, 1.1.1.1") == 429
    assert get("1.1.1.1, 10.9.9.9") == 429  # a chain of trusted proxies hands over to the first untrusted hop


@pytest.mark.django_db
def test_a_client_reaching_the_server_directly_cannot_rotate_x_forwarded_for(
    client: Any, demo: Namespace, settings: Any
) -> None:
    """Issue 9: with a proxy count, a direct client rotated X-Forwarded-For past the limit (200 of 200)."""
    limited(settings, "3/hour")
    configure(settings, trusted_proxies=(ip_network("10.0.0.0/8"), ip_network("127.0.0.1/32")))
    direct = {"REMOTE_ADDR": "192.0.2.50"}

    codes = [
        client.get("/llms.txt", headers={"X-Forwarded-For": f"198.51.100.{n}"}, **direct).status_code for n in range(6)
    ]

    assert codes == [200, 200, 200, 429, 429, 429]


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


def redis_keys_clear(pattern: str) -> redis.Redis:
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    for key in client.scan_iter(f"{KEY_PREFIX}:{pattern}"):
        client.delete(key)
    return client


@pytest.mark.services
def test_the_redis_script_admits_exactly_the_limit_in_a_window(settings: Any) -> None:
    client = redis_keys_clear("*scripted*")
    limiter = SlidingWindowLimiter()
    rate = Rate(5, 3600)

    decisions = [limiter.hit(scope="scripted", client="c1", rate=rate) for _ in range(7)]

    assert [d.admitted for d in decisions if d] == [True] * 5 + [False] * 2
    assert [d.remaining for d in decisions if d][:5] == [4, 3, 2, 1, 0]
    assert all(1 <= d.reset <= LONGEST_WAIT for d in decisions if d)
    window = next(iter(client.scan_iter(f"{KEY_PREFIX}:*scripted:c1")))
    assert 0 < client.pttl(window) <= LONGEST_WAIT * 1000
    assert limiter.hit(scope="scripted", client="c2", rate=rate).admitted  # type: ignore[union-attr]


@pytest.mark.services
def test_a_fast_client_costs_few_redis_calls(settings: Any) -> None:
    """Leases double while a client spends them in time: 1000 requests take about log2(1000) leases, not 1000."""
    client = redis_keys_clear("*leased*")
    limiter = SlidingWindowLimiter(lease_for=3600)  # no lease lapses during the test, however slow the machine
    rate = Rate(1_000_000, 36_000)

    decisions = [limiter.hit(scope="leased", client="c1", rate=rate) for _ in range(1000)]

    assert all(d is not None and d.admitted for d in decisions)
    window = next(iter(client.scan_iter(f"{KEY_PREFIX}:*leased:c1")))
    assert client.zcard(window) == 10  # leases of 1, 2, 4, ..., 512 slots: 1023 >= 1000
    assert int(client.get(f"{window.decode()}:held") or 0) == 1023
    assert [d.remaining for d in decisions if d][-1] == 1_000_000 - 1000  # one process: the count is exact


@pytest.mark.services
def test_near_the_limit_every_request_asks_redis(settings: Any) -> None:
    """Leases are at most an eighth of what is left, so the last slots are granted one at a time."""
    client = redis_keys_clear("*near*")
    limiter = SlidingWindowLimiter(lease_for=3600)
    rate = Rate(40, 36_000)

    admitted = sum(
        bool(d and d.admitted) for d in (limiter.hit(scope="near", client="c", rate=rate) for _ in range(45))
    )

    window = next(iter(client.scan_iter(f"{KEY_PREFIX}:*near:c")))
    members: list[bytes] = list(client.zrange(window, 0, -1))  # type: ignore[arg-type]
    sizes = sorted(int(member.rsplit(b":", 1)[1]) for member in members)
    assert admitted == 40
    assert sum(sizes) == 40
    assert sizes.count(1) >= 8  # the last 16 slots: no lease above (40 - held) // 8


@pytest.mark.services
def test_a_lapsed_lease_gives_its_unused_slots_back(settings: Any) -> None:
    client = redis_keys_clear("*lapsed*")
    limiter = SlidingWindowLimiter(lease_for=3600)
    rate = Rate(100, 36_000)
    key = f"{KEY_PREFIX}:100/36000:lapsed:c"
    for _ in range(4):  # leases of 1, 2 and 4 slots: the last holds 3 unused
        limiter.hit(scope="lapsed", client="c", rate=rate)
    assert int(client.get(f"{key}:held") or 0) == 7
    lease = limiter.leases._leases[key]
    lease.expires = 0  # as if its time had passed: the next request asks Redis and hands the 3 back

    decision = limiter.hit(scope="lapsed", client="c", rate=rate)

    assert decision is not None and decision.admitted
    # 5 spent, and the new lease: as many slots as the lapsed one used (1)
    assert int(client.get(f"{key}:held") or 0) == 5
    assert decision.remaining == 95


SPENDER = """
import json, sys
import django
django.setup()
from evergreen_site.settings.env import Rate
from gateway.ratelimit import SlidingWindowLimiter

limiter = SlidingWindowLimiter(lease_for=float(sys.argv[2]))
print("ready", flush=True)
sys.stdin.readline()  # every process starts together
admitted = 0
while True:
    decision = limiter.hit(scope="spenders", client="shared", rate=Rate(int(sys.argv[1]), 36000))
    if not decision.admitted:
        break
    admitted += 1
print(json.dumps({"admitted": admitted}), flush=True)
"""


@pytest.mark.services
@pytest.mark.parametrize("lease_for", [3600.0, 0.001])
def test_processes_racing_for_one_window_admit_exactly_the_limit(settings: Any, lease_for: float) -> None:
    """Four processes spend one client's window at once, each until Redis refuses it: together exactly the limit.

    With leases that never lapse and with leases that lapse almost at once (handed back on the next call).
    """
    redis_keys_clear("*spenders*")
    limit = 2000
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.test", "PYTHONPATH": str(ROOT)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", SPENDER, str(limit), str(lease_for)],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        counts = [
            json.loads(process.communicate(timeout=300)[0].strip().splitlines()[-1])["admitted"]
            for process in processes
        ]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()

    assert sum(counts) == limit
    assert sum(1 for count in counts if count > 0) >= 2  # they did share it


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_worker_processes_share_one_window(demo: Namespace, tmp_path: Path) -> None:
    """At most 120 requests in the window across two processes; the 121st, on either, gets 429 + Retry-After."""
    ports = [worker.free_port(), worker.free_port()]
    redis_keys_clear("*")  # before the servers start: a worker's leases are only ever spent against its Redis window
    limit = {"EVERGREEN_RATE_LIMIT": "120/hour"}
    with (
        worker.gunicorn(ports[0], tmp_path / "a.log", env=limit),
        worker.gunicorn(ports[1], tmp_path / "b.log", env=limit),
    ):
        urls = [f"http://127.0.0.1:{port}/llms.txt" for port in ports]

        def up(url: str) -> bool:  # /healthz is not rate limited, so the window stays untouched
            try:
                return httpx.get(url.replace("llms.txt", "healthz"), timeout=2).status_code in {200, 503}
            except httpx.HTTPError:
                return False

        for url in urls:
            worker.wait_for(partial(up, url), timeout=60, what=f"gunicorn at {url}")
        with httpx.Client(timeout=10) as http:
            answers = [http.get(urls[n % 2]) for n in range(130)]

    admitted = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code == 429]
    assert len(admitted) == 120
    assert len(refused) == 10
    assert {a.url.port for a in refused} == set(ports)
    assert all(1 <= int(a.headers["Retry-After"]) <= LONGEST_WAIT for a in refused)


def test_the_local_window_forgets_idle_clients_instead_of_growing() -> None:
    window = LocalWindow(max_keys=2)
    window.hit("a", Rate(5, 60))
    window.hit("b", Rate(5, 60))
    window._hits["a"][-1] -= 7200  # idle for two hours

    window.hit("c", Rate(5, 60))

    assert set(window._hits) == {"b", "c"}

"""Redis through the guarded connections: a paused or killed server fails one call, then fails fast."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from knowledge.resilience.redis_guard import RedisUnavailableError, redis_breakers_reset, redis_client, redis_states
from tests.configure import configure
from tests.faults.processes import PrivateRedis, private_redis
from tests.worker import wait_for


@pytest.fixture
def server(settings: Any) -> Iterator[PrivateRedis]:
    configure(settings, redis_timeout_seconds=0.25, dependency_retry_seconds=0.5)
    redis_breakers_reset()
    with private_redis() as running:
        yield running
    redis_breakers_reset()


def test_a_paused_redis_fails_one_call_then_every_call_fails_without_trying(server: PrivateRedis) -> None:
    client = redis_client(server.url)
    assert client.set("k", "v")
    server.pause()

    with pytest.raises(redis.TimeoutError):
        client.get("k")
    with pytest.raises(RedisUnavailableError):
        client.get("k")
    (state,) = redis_states().values()
    assert state.state == "open" and "Timeout" in state.error

    server.resume()
    assert wait_for(lambda: _answers(client), what="the breaker to let a probe through") == b"v"
    assert next(iter(redis_states().values())).state == "closed"


def test_a_killed_redis_is_refused_fast_and_a_restarted_one_is_used_again(server: PrivateRedis) -> None:
    client = redis_client(server.url)
    assert client.set("k", "v")
    server.kill()

    with pytest.raises(redis.ConnectionError) as first:
        client.get("k")
    assert not isinstance(first.value, RedisUnavailableError)
    with pytest.raises(RedisUnavailableError):
        client.get("k")

    server.start()  # empty: no persistence
    wait_for(lambda: _answers(client, missing_ok=True), what="the restarted Redis")
    assert client.set("k", "again")


def _answers(client: redis.Redis, *, missing_ok: bool = False) -> Any:
    try:
        value = client.get("k")
    except redis.ConnectionError:
        return None
    return True if missing_ok else value

"""`make bench` never empties a Redis database that holds someone else's keys (issue 10 §5)."""

from __future__ import annotations

import os
import uuid

import pytest
import redis

from bench.redisdb import CLAIM_KEY, SharedRedisError, redis_flush_owned

pytestmark = pytest.mark.services


def test_the_bench_refuses_a_redis_database_in_use_by_others() -> None:
    url = os.environ["REDIS_URL"]  # the test run's own database: it holds keys and no bench claim
    client = redis.Redis.from_url(url)
    key = f"someone-else:{uuid.uuid4()}"
    client.set(key, "precious", ex=60)
    try:
        assert not client.exists(CLAIM_KEY)
        with pytest.raises(SharedRedisError, match="it is not the bench's own database"):
            redis_flush_owned(url)
        assert client.get(key) == b"precious"
    finally:
        client.delete(key)

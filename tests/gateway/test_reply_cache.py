"""The reply cache stays bounded by bytes: in each process, and in Redis by the server's maxmemory policy.

Every distinct question adds an answer, and agents' questions are mostly distinct, so neither level
may grow with them: the process drops its least recently used answers beyond
EVERGREEN_REPLY_CACHE_BYTES, and the shared level lives on a Redis of its own
(EVERGREEN_CACHE_REDIS_URL) that evicts, apart from the one holding the broker and the rate limits.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.core.cache import caches

from gateway import cache as reply_cache
from gateway.cache import ENTRY_OVERHEAD, ByteBoundedLru, reply_cached, reply_peek
from gateway.packs import pack_recall, pack_record
from gateway.writebehind import shared_set_each, shared_writes_flush
from tests.configure import configure
from tests.faults.processes import PrivateRedis, private_redis

MAXMEMORY = 4 * 1024 * 1024


def test_the_process_level_keeps_at_most_its_bytes_dropping_the_least_recently_used() -> None:
    body = b"x" * 1000
    cost = len(body) + len("k00") + ENTRY_OVERHEAD
    memory = ByteBoundedLru(size=cost * 20)
    for n in range(20):
        memory.put(f"k{n:02d}", (body, "etag"))
    assert memory.get("k00") is not None  # k00 is now the most recently used

    for n in range(20, 30):
        memory.put(f"k{n:02d}", (body, "etag"))

    assert memory.bytes <= cost * 20
    assert memory.get("k00") is not None
    assert memory.get("k01") is None and memory.get("k10") is None  # the least recently used went first
    assert memory.get("k29") is not None


def test_an_answer_above_a_sixteenth_of_the_budget_is_not_kept_in_process() -> None:
    memory = ByteBoundedLru(size=16_000)
    memory.put("big", (b"x" * 2000, "etag"))

    assert memory.get("big") is None and memory.bytes == 0


def test_the_process_level_is_sized_by_the_setting(settings: Any) -> None:
    configure(settings, reply_cache_bytes=100_000)
    reply_cache.reply_cache_clear()
    for n in range(100):
        reply_cached(f"sized-{n}", lambda n=n: bytes([n % 256]) * 5000)  # type: ignore[misc]

    assert 0 < reply_cache._memory().bytes <= 100_000


@pytest.fixture
def evicting_redis(settings: Any) -> Iterator[PrivateRedis]:
    """A Redis server of the reply cache's own with 4 MB maxmemory and allkeys-lru, as docker-compose.yml sets."""
    with private_redis() as server:
        client = redis.Redis.from_url(server.url)
        client.config_set("maxmemory", MAXMEMORY)
        client.config_set("maxmemory-policy", "allkeys-lru")
        settings.CACHES = {
            **settings.CACHES,
            "replies": {
                "BACKEND": "knowledge.resilience.cache.GuardedRedisCache",
                "LOCATION": server.url,
                "KEY_PREFIX": "evergreen",
            },
        }
        reply_cache.reply_cache_clear()
        yield server
        reply_cache.reply_cache_clear()


@pytest.mark.services
def test_answers_go_to_the_reply_cache_redis_which_evicts_instead_of_growing(
    evicting_redis: PrivateRedis, settings: Any
) -> None:
    limiter_and_broker = redis.Redis.from_url(os.environ["REDIS_URL"])
    limiter_and_broker.set("evergreen-test:broker-marker", b"kept")
    own = redis.Redis.from_url(evicting_redis.url)

    for n in range(200):  # 200 distinct answers of 50 KB: 10 MB through a 4 MB server
        body = f"{n:04d}".encode() * 12_500
        reply_cached(f"ctx:evict:{n}", lambda body=body: body)  # type: ignore[misc]
        shared_writes_flush()
        reply_cache.reply_cache_clear()  # the process level forgets, so every answer is also read back from Redis

    info = own.info("memory")
    stats = own.info("stats")
    assert int(info["used_memory"]) <= MAXMEMORY + 512 * 1024  # Redis's own bookkeeping aside
    assert int(stats["evicted_keys"]) > 0
    assert reply_peek("ctx:evict:199") is not None  # the newest answer is there
    assert sum(own.exists(f"evergreen:1:eg:reply:ctx:evict:{n}") for n in range(200)) < 100  # evicted: misses
    assert limiter_and_broker.get("evergreen-test:broker-marker") == b"kept"
    assert not any(limiter_and_broker.scan_iter("*eg:reply:*"))  # nothing of the reply cache on the broker's Redis
    limiter_and_broker.delete("evergreen-test:broker-marker")


@pytest.mark.services
def test_pack_records_for_verify_live_in_the_reply_cache_too(evicting_redis: PrivateRedis) -> None:
    shared_set_each([pack_record(namespace_id=7, release_id=3, etag='"abc"', document={"entries": [{"id": "EG-1"}]})])

    assert any(redis.Redis.from_url(evicting_redis.url).scan_iter("*eg:pack:7:*"))
    assert caches["replies"].get('eg:pack:7:"abc"') is not None
    recalled = pack_recall(namespace_id=7, etag='"abc"')
    assert recalled is not None and recalled.entry_ids == ("EG-1",)

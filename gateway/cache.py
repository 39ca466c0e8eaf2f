"""Whole responses cached per (release, normalized request): in process, and for some in the shared reply cache.

Keys always include the release key, and releases are immutable, so an entry is never stale: a
publish changes the release key and old entries simply stop being asked for.

Both levels are bounded by bytes, since agents' topics are mostly distinct and every one adds an
answer: the process keeps at most EVERGREEN_REPLY_CACHE_BYTES (least recently used first out), and the
shared level is the `replies` cache, a Redis of its own whose `maxmemory` and eviction policy bound
it (docker-compose.yml) without touching the broker's queues or the rate limits.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.core.cache import caches

from gateway.writebehind import SharedWrite, shared_write
from knowledge.retrieval.render.release import etag_of
from knowledge.telemetry.metrics import CACHE, tallies

logger = logging.getLogger(__name__)

SHARED_TIMEOUT_SECONDS = 24 * 3600
KEY_PREFIX = "eg:reply:"
ENTRY_OVERHEAD = 200  # bytes of key, ETag and bookkeeping counted with each body

Cached = tuple[bytes, str]  # (body, etag)


class ByteBoundedLru:
    """Least-recently-used answers, at most `size` bytes of them; an answer above a sixteenth is not kept."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[str, Cached] = OrderedDict()
        self._size = size
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def _cost(key: str, value: Cached) -> int:
        return len(value[0]) + len(key) + ENTRY_OVERHEAD

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: str) -> Cached | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: Cached) -> None:
        cost = self._cost(key, value)
        if cost > self._size // 16:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= self._cost(key, old)
            self._items[key] = value
            self._bytes += cost
            while self._bytes > self._size:
                dropped_key, dropped = self._items.popitem(last=False)
                self._bytes -= self._cost(dropped_key, dropped)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_local: ByteBoundedLru | None = None


def _memory() -> ByteBoundedLru:
    global _local  # noqa: PLW0603 - one per process, sized by the settings when first used
    if _local is None:
        _local = ByteBoundedLru(settings.EVERGREEN.reply_cache_bytes)
    return _local


def reply_cache_clear() -> None:
    """Empty this process's level (tests; the size is read from the settings again)."""
    global _local  # noqa: PLW0603
    _local = None


def _unavailable(error: Exception) -> None:
    """Redis failures are logged once per outage by its breaker (knowledge.resilience.redis_guard)."""
    logger.log(logging.DEBUG if isinstance(error, redis.RedisError) else logging.WARNING, "Response cache: %s", error)


def reply_peek(key: str, *, shared: bool = True) -> Cached | None:
    """The cached body and ETag, without computing anything (so If-None-Match is answered before ranking).

    `shared=False` looks in this process only (no Redis round trip: see reply_built).
    """
    found = _memory().get(key)
    if found is not None:
        tallies.count(CACHE, "local")
        return found
    if not shared:
        tallies.count(CACHE, "miss")
        return None
    try:
        shared = caches["replies"].get(KEY_PREFIX + key)
    except Exception as error:  # noqa: BLE001 - a cache outage is a miss, never an error
        _unavailable(error)
        tallies.count(CACHE, "miss")
        return None
    if isinstance(shared, bytes):
        value = (shared, etag_of(shared))
        _memory().put(key, value)
        tallies.count(CACHE, "shared")
        return value
    tallies.count(CACHE, "miss")
    return None


@dataclass(frozen=True, slots=True)
class Built:
    """A freshly built answer, and what else goes to the shared cache with it (written behind, together)."""

    body: bytes
    etag: str
    also: tuple[SharedWrite, ...] = ()


def reply_built(key: str, build: Callable[[], Built], *, shared: bool = True) -> tuple[Cached, bool]:
    """The cached body for `key`, building and storing it on a miss; and whether it was built here.

    `shared=False` keeps the answer in this process only, for answers cheaper to build than a Redis
    round trip is to wait for (a context pack: ranking and packing take about as long as a round trip
    on a busy machine, and agents' topics are mostly distinct, so the shared read mostly missed).
    What the answer writes besides (`also`) goes to the shared cache either way, written behind.
    """
    found = reply_peek(key, shared=shared)
    if found is not None:
        return found, False
    built = build()
    value = (built.body, built.etag)
    _memory().put(key, value)
    writes = [(KEY_PREFIX + key, built.body, SHARED_TIMEOUT_SECONDS)] if shared else []
    if writes or built.also:
        shared_write([*writes, *built.also])
    return value, True


def reply_cached(key: str, build: Callable[[], bytes]) -> Cached:
    """The cached body for `key`, building and storing it on a miss."""

    def built() -> Built:
        body = build()
        return Built(body, etag_of(body))

    return reply_built(key, built)[0]

"""Whole responses cached per (release, normalized request): in process first, then the Django cache (Redis).

Keys always include the release key, and releases are immutable, so an entry is never stale: a
publish changes the release key and old entries simply stop being asked for.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable

import redis
from django.core.cache import cache

from knowledge.retrieval.render.release import etag_of
from knowledge.telemetry.metrics import CACHE, tallies

logger = logging.getLogger(__name__)

LOCAL_MAX = 4096
SHARED_TIMEOUT_SECONDS = 24 * 3600
KEY_PREFIX = "eg:reply:"

Cached = tuple[bytes, str]  # (body, etag)


class _Lru:
    def __init__(self, size: int) -> None:
        self._items: OrderedDict[str, Cached] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: str) -> Cached | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: Cached) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_local = _Lru(LOCAL_MAX)


def reply_cache_clear() -> None:
    _local.clear()


def _unavailable(error: Exception) -> None:
    """Redis failures are logged once per outage by its breaker (knowledge.resilience.redis_guard)."""
    logger.log(logging.DEBUG if isinstance(error, redis.RedisError) else logging.WARNING, "Response cache: %s", error)


def reply_peek(key: str) -> Cached | None:
    """The cached body and ETag, without computing anything (so If-None-Match is answered before ranking)."""
    found = _local.get(key)
    if found is not None:
        tallies.count(CACHE, "local")
        return found
    try:
        shared = cache.get(KEY_PREFIX + key)
    except Exception as error:  # noqa: BLE001 - a cache outage is a miss, never an error
        _unavailable(error)
        tallies.count(CACHE, "miss")
        return None
    if isinstance(shared, bytes):
        value = (shared, etag_of(shared))
        _local.put(key, value)
        tallies.count(CACHE, "shared")
        return value
    tallies.count(CACHE, "miss")
    return None


def reply_cached(key: str, build: Callable[[], bytes]) -> Cached:
    """The cached body for `key`, building and storing it on a miss."""
    found = reply_peek(key)
    if found is not None:
        return found
    body = build()
    value = (body, etag_of(body))
    _local.put(key, value)
    try:
        cache.set(KEY_PREFIX + key, body, timeout=SHARED_TIMEOUT_SECONDS)
    except Exception as error:  # noqa: BLE001
        _unavailable(error)
    return value

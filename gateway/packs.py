"""Which entries a pack held, by its ETag: remembered when the pack is built, read by /api/verify.

A pack is built once per (release, query) and cached; at that moment its ETag, release and entry
IDs go to the shared reply cache (a Redis of its own that evicts when full, see settings) for
PACK_MEMORY_SECONDS, so an agent can later check an answer against "the pack with ETag X" without
resending it (an evicted pack is unknown, as an expired one is). The process keeps the last LOCAL_PACKS of them too, so
while Redis fails a pack is still found on the worker that built it.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson
import redis
from django.core.cache import caches

logger = logging.getLogger(__name__)

PACK_MEMORY_SECONDS = 7 * 24 * 3600
LOCAL_PACKS = 4096
KEY = "eg:pack:{namespace}:{etag}"


@dataclass(frozen=True, slots=True)
class PackRecord:
    release_id: int  # the Release row
    entry_ids: tuple[str, ...]


_local: OrderedDict[str, bytes] = OrderedDict()
_local_lock = threading.Lock()


def _keep(key: str, value: bytes) -> None:
    with _local_lock:
        _local[key] = value
        _local.move_to_end(key)
        while len(_local) > LOCAL_PACKS:
            _local.popitem(last=False)


def _failed(what: str, etag: str, error: Exception) -> None:
    """Redis failures are logged once per outage by its breaker (knowledge.resilience.redis_guard)."""
    level = logging.DEBUG if isinstance(error, redis.RedisError) else logging.WARNING
    logger.log(level, "Could not %s pack %s: %s", what, etag, error)


def pack_record(*, namespace_id: int, release_id: int, etag: str, document: dict[str, Any]) -> tuple[str, bytes, int]:
    """Keep a pack's record in this process; returns the shared cache write (key, value, timeout) for the caller."""
    ids = [entry["id"] for entry in document.get("entries", ())]
    key = KEY.format(namespace=namespace_id, etag=etag)
    value = orjson.dumps([release_id, ids])
    _keep(key, value)
    return key, value, PACK_MEMORY_SECONDS


def pack_recall(*, namespace_id: int, etag: str) -> PackRecord | None:
    key = KEY.format(namespace=namespace_id, etag=etag.strip())
    found: Any = _local.get(key)
    if found is None:
        try:
            found = caches["replies"].get(key)
        except Exception as error:  # noqa: BLE001
            _failed("read", etag, error)
            return None
    if not isinstance(found, bytes):
        return None
    release_id, ids = orjson.loads(found)
    return PackRecord(int(release_id), tuple(ids))

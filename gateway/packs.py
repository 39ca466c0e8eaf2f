"""Which entries a pack held, by its ETag: remembered when the pack is built, read by /api/verify.

A pack is built once per (release, query) and cached; at that moment its ETag, release and entry
IDs go to the shared cache for PACK_MEMORY_SECONDS, so an agent can later check an answer against
"the pack with ETag X" without resending it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson
from django.core.cache import cache

logger = logging.getLogger(__name__)

PACK_MEMORY_SECONDS = 7 * 24 * 3600
KEY = "eg:pack:{namespace}:{etag}"


@dataclass(frozen=True, slots=True)
class PackRecord:
    release_id: int  # the Release row
    entry_ids: tuple[str, ...]


def pack_remember(*, namespace_id: int, release_id: int, etag: str, document: dict[str, Any]) -> None:
    ids = [entry["id"] for entry in document.get("entries", ())]
    try:
        cache.set(KEY.format(namespace=namespace_id, etag=etag), orjson.dumps([release_id, ids]), PACK_MEMORY_SECONDS)
    except Exception as error:  # noqa: BLE001 - a cache outage must not fail the request that built the pack
        logger.warning("Could not remember pack %s: %s", etag, error)


def pack_recall(*, namespace_id: int, etag: str) -> PackRecord | None:
    try:
        found = cache.get(KEY.format(namespace=namespace_id, etag=etag.strip()))
    except Exception as error:  # noqa: BLE001
        logger.warning("Could not read pack %s: %s", etag, error)
        return None
    if not isinstance(found, bytes):
        return None
    release_id, ids = orjson.loads(found)
    return PackRecord(int(release_id), tuple(ids))

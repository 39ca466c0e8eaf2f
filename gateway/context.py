"""The /api/context pack of a loaded release, cached per (release, normalized query); shared with MCP/A2A."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

import orjson

from gateway.cache import Cached, reply_cached
from gateway.packs import pack_remember
from knowledge.requestlog.records import Observed
from knowledge.requestlog.records import context_observed as observed_from_context
from knowledge.retrieval.payload import ContextQuery
from knowledge.retrieval.render.release import etag_of
from knowledge.selectors.documents import context_document
from knowledge.selectors.serving import LoadedRelease


def context_cache_key(release: LoadedRelease, query: ContextQuery) -> str:
    asked = [query.topic, query.budget, query.category, query.limit, query.budget_mode]
    normalized = orjson.dumps([*asked, list(query.paths)] if query.paths else asked)
    # Namespace and release in every key (design: isolation), then the normalized query.
    namespace = release.snapshot.namespace.slug
    return f"ctx:{namespace}:{release.key}:{hashlib.sha256(normalized).hexdigest()[:32]}"


OBSERVED_MAX = 4096

_observed: OrderedDict[tuple[Any, ...], Observed] = OrderedDict()
_observed_lock = threading.Lock()


def context_observed(
    release: LoadedRelease, query: ContextQuery, body: bytes, etag: str, *, channel: str
) -> Observed | None:
    """What the request log records for this pack: parsed from the bytes once per process, then reused."""
    if release.namespace_id is None:
        return None
    key = (release.release_id, release.key, query, channel)
    with _observed_lock:
        found = _observed.get(key)
        if found is not None:
            _observed.move_to_end(key)
            return found
    found = observed_from_context(
        orjson.loads(body),
        namespace_id=release.namespace_id,
        release_id=release.release_id,
        channel=channel,
        etag=etag,
        limit=query.limit,
    )
    with _observed_lock:
        _observed[key] = found
        while len(_observed) > OBSERVED_MAX:
            _observed.popitem(last=False)
    return found


def context_body(release: LoadedRelease, query: ContextQuery) -> Cached:
    """The serialized payload and its ETag; identical bytes for the same release and query.

    A newly built pack is also remembered by ETag (gateway.packs), for citation checks against it.
    """

    def build() -> bytes:
        document = context_document(release, query)
        body = orjson.dumps(document)
        if release.namespace_id is not None:
            pack_remember(
                namespace_id=release.namespace_id, release_id=release.release_id, etag=etag_of(body), document=document
            )
        return body

    return reply_cached(context_cache_key(release, query), build)

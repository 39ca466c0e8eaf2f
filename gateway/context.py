"""The /api/context pack of a loaded release, cached per (release, normalized query); shared with MCP/A2A."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from gateway.cache import Cached, reply_cached
from gateway.packs import pack_remember
from knowledge.retrieval.payload import ContextQuery, context_build
from knowledge.retrieval.render.release import etag_of
from knowledge.selectors.serving import LoadedRelease


def context_cache_key(release: LoadedRelease, query: ContextQuery) -> str:
    normalized = orjson.dumps([query.topic, query.budget, query.category, query.limit])
    # Namespace and release in every key (design: isolation), then the normalized query.
    namespace = release.snapshot.namespace.slug
    return f"ctx:{namespace}:{release.key}:{hashlib.sha256(normalized).hexdigest()[:32]}"


def context_document(release: LoadedRelease, query: ContextQuery) -> dict[str, Any]:
    """The seed §4 payload as a dict (uncached: ranks and packs every time)."""
    return context_build(index=release.index, view=release.view, query=query)


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

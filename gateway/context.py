"""The /api/context pack of a loaded release, cached per (release, normalized query); shared with MCP/A2A."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from gateway.cache import Cached, reply_cached
from knowledge.retrieval.payload import ContextQuery, context_build
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
    """The serialized payload and its ETag; identical bytes for the same release and query."""
    return reply_cached(context_cache_key(release, query), lambda: orjson.dumps(context_document(release, query)))

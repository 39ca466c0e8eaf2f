"""The /api/context pack of a loaded release, cached per (release, normalized query); shared with MCP/A2A."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.cache import Built, reply_built
from gateway.packs import pack_record
from knowledge.requestlog.records import Observed
from knowledge.requestlog.records import context_observed as observed_from_context
from knowledge.retrieval.digests import sha256_hex
from knowledge.retrieval.payload import ContextQuery
from knowledge.retrieval.render.release import etag_of
from knowledge.selectors.documents import context_document
from knowledge.selectors.serving import LoadedRelease


def context_cache_key(release: LoadedRelease, query: ContextQuery) -> str:
    asked = [query.topic, query.budget, query.category, query.limit, query.budget_mode]
    normalized = orjson.dumps([*asked, list(query.paths)] if query.paths else asked)
    # Namespace and release in every key (design: isolation), then the normalized query.
    namespace = release.snapshot.namespace.slug
    return f"ctx:{namespace}:{release.key}:{sha256_hex(normalized)[:32]}"


OBSERVED_MAX = 4096

_observed: OrderedDict[tuple[Any, ...], Observed] = OrderedDict()
_observed_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ContextAnswer:
    """A pack's bytes and ETag; the document too when this request built it (so nothing parses the bytes back)."""

    body: bytes
    etag: str
    document: dict[str, Any] | None = None


def context_observed(
    release: LoadedRelease, query: ContextQuery, answer: ContextAnswer, *, channel: str
) -> Observed | None:
    """What the request log records for this pack: from the built document, else parsed from the bytes once per
    process, then reused."""
    if release.namespace_id is None:
        return None
    key = (release.release_id, release.key, query, channel)
    with _observed_lock:
        found = _observed.get(key)
        if found is not None:
            _observed.move_to_end(key)
            return found
    found = observed_from_context(
        answer.document if answer.document is not None else orjson.loads(answer.body),
        namespace_id=release.namespace_id,
        release_id=release.release_id,
        channel=channel,
        etag=answer.etag,
        limit=query.limit,
        clearance=release.clearance,
    )
    with _observed_lock:
        _observed[key] = found
        while len(_observed) > OBSERVED_MAX:
            _observed.popitem(last=False)
    return found


def context_answer(release: LoadedRelease, query: ContextQuery) -> ContextAnswer:
    """The serialized payload and its ETag; identical bytes for the same release and query.

    Packs are cached in this process only (gateway.cache.reply_built says why). A newly built pack is
    also remembered by ETag (gateway.packs), for citation checks against it, here and, written behind,
    in the shared reply cache for the other workers.
    """
    document: dict[str, Any] | None = None

    def build() -> Built:
        nonlocal document
        document = context_document(release, query)
        body = orjson.dumps(document)
        etag = etag_of(body)
        if release.namespace_id is None:
            return Built(body, etag)
        record = pack_record(
            namespace_id=release.namespace_id, release_id=release.release_id, etag=etag, document=document
        )
        return Built(body, etag, also=(record,))

    (body, etag), _ = reply_built(context_cache_key(release, query), build, shared=False)
    return ContextAnswer(body, etag, document)

"""/context.json: the whole knowledge base in the contract's shape, valid against /schemas/knowledge.schema.json.

With a PartsCache, each entry's JSON is kept between builds (it depends on the entry and the
namespace's URL only) and the document is assembled around them: orjson writes compact JSON, so the
bytes equal serializing the whole document at once (tests/knowledge/test_incremental_release.py).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import orjson

from knowledge.retrieval.contract.shapes import ENTRY, KNOWLEDGE, Knowledge, Served
from knowledge.retrieval.render.parts import PartsCache
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot

_ENTRIES = b'"entries":[]'  # a key, so it cannot occur inside a string (its quotes would be escaped)


def _entry_json(served: Served) -> bytes:
    # A copy of exactly its size: orjson's own bytes keep the buffer it wrote into (about 10 KB for a
    # 1 KB entry), which a cache holding 100,000 of them would pay ten times over.
    return memoryview(orjson.dumps(ENTRY.json(served))).tobytes()


def render_context_json(snapshot: Snapshot, stamp: ReleaseStamp, *, parts: PartsCache | None = None) -> bytes:
    if parts is None:
        return orjson.dumps(KNOWLEDGE.json(Knowledge(snapshot, stamp)))
    # The frame without the entries: ENTRY reads the entry and the namespace's URL only (not the stamp).
    document = KNOWLEDGE.json(Knowledge(replace(snapshot, entries=()), stamp))
    document["entryCount"], document["totalTokens"] = len(snapshot.entries), snapshot.total_tokens
    frame = orjson.dumps(document)
    at = frame.index(_ENTRIES) + len(_ENTRIES) - 1
    ns = snapshot.namespace
    entries = [
        parts.get(("context.json", entry, ns.base_url), partial(_entry_json, Served(entry, ns, stamp)))
        for entry in snapshot.entries
    ]
    return b"".join((frame[:at], b",".join(entries), frame[at:]))

"""/context.json: the whole knowledge base in the contract's shape, valid against /schemas/knowledge.schema.json.

With a PartsCache, each entry's JSON is kept between builds (it depends on the entry and the
namespace's URL only) and the document is assembled around them: orjson writes compact JSON, so the
bytes equal serializing the whole document at once (tests/knowledge/test_incremental_release.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial

import orjson

from knowledge.retrieval.contract.shapes import ENTRY, KNOWLEDGE, Knowledge, Served
from knowledge.retrieval.render.parts import PartsCache
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo, ReleaseStamp, Snapshot

_ENTRIES = b'"entries":[]'  # a key, so it cannot occur inside a string (its quotes would be escaped)
PIECE_BYTES = 256 * 1024


def _entry_json(served: Served) -> bytes:
    # A copy of exactly its size: orjson's own bytes keep the buffer it wrote into (about 10 KB for a
    # 1 KB entry), which a cache holding 100,000 of them would pay ten times over.
    return memoryview(orjson.dumps(ENTRY.json(served))).tobytes()


def render_context_json(snapshot: Snapshot, stamp: ReleaseStamp, *, parts: PartsCache | None = None) -> bytes:
    if parts is None:
        return orjson.dumps(KNOWLEDGE.json(Knowledge(snapshot, stamp)))
    return b"".join(context_json_pieces(snapshot, stamp, parts=parts))


def context_json_pieces(snapshot: Snapshot, stamp: ReleaseStamp, *, parts: PartsCache | None = None) -> Iterator[bytes]:
    """context.json a piece at a time: the frame around the entries, and each entry's part (kept in
    `parts` between builds when given); joined, the bytes of serializing the whole document at once."""
    # The frame without the entries: ENTRY reads the entry and the namespace's URL only (not the stamp).
    document = KNOWLEDGE.json(Knowledge(replace(snapshot, entries=()), stamp))
    document["entryCount"], document["totalTokens"] = len(snapshot.entries), snapshot.total_tokens
    frame = orjson.dumps(document)
    at = frame.index(_ENTRIES) + len(_ENTRIES) - 1
    ns = snapshot.namespace
    yield frame[:at]
    # The entries go out joined a few hundred KB at a time: one piece per entry cost a write and a
    # hash update per entry downstream (RenderedArtifact.written), more than joining them does.
    batch: list[bytes] = []
    held, first = 0, True
    base_url = ns.base_url
    tag = ("context.json", base_url)
    for entry in snapshot.entries:
        render = partial(_served_json, entry, ns, stamp)
        if parts is None:
            batch.append(render())
        else:
            key = partial(_part_key, entry, base_url)
            batch.append(parts.get_for(entry, tag, key, render))
        held += len(batch[-1])
        if held >= PIECE_BYTES:
            yield from _joined(batch, first=first)
            batch, held, first = [], 0, False
    yield from _joined(batch, first=first)
    yield frame[at:]


def _served_json(entry: EntryRecord, ns: NamespaceInfo, stamp: ReleaseStamp) -> bytes:
    return _entry_json(Served(entry, ns, stamp))


def _part_key(entry: object, base_url: str) -> tuple[str, object, str]:
    return ("context.json", entry, base_url)


def _joined(parts: list[bytes], *, first: bool) -> Iterator[bytes]:
    if parts:
        if not first:
            yield b","
        yield b",".join(parts)

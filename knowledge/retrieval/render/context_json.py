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
from knowledge.retrieval.render.parts import KeptGroup, PartsCache
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo, ReleaseStamp, Snapshot

_ENTRIES = b'"entries":[]'  # a key, so it cannot occur inside a string (its quotes would be escaped)
GROUP = 256  # entries per piece: a few hundred KB
CONTEXT_GROUPS = "context.json/"  # kept groups' names in a PartsCache


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
    # The entries go out joined GROUP at a time: one piece per entry cost a write and a hash update per
    # entry downstream (RenderedArtifact.written), more than joining them does. With `parts`, a group
    # whose records are the very ones of the last build's group at its place is that group's bytes
    # (a tuple comparison, identity first), so a one-entry build touches one group's entries.
    entries, base_url, first = snapshot.entries, ns.base_url, True
    tag = ("context.json", base_url)
    for start in range(0, len(entries), GROUP):
        group = tuple(entries[start : start + GROUP])
        if parts is None:
            joined = b",".join([_served_json(entry, ns, stamp) for entry in group])
        else:
            name = f"{CONTEXT_GROUPS}{start}"
            near = [parts.file_held(f"{CONTEXT_GROUPS}{place}") for place in (start - GROUP, start, start + GROUP)]
            render = partial(_group, group, ns, stamp, parts, tag, near)
            joined = parts.file(name, (base_url, group), render).joined()
        if not first:
            yield b","
        yield joined
        first = False
    yield frame[at:]


def _group(
    group: tuple[EntryRecord, ...],
    ns: NamespaceInfo,
    stamp: ReleaseStamp,
    parts: PartsCache,
    tag: tuple[str, str],
    near: list[object | None],
) -> KeptGroup:
    """The group's parts: an entry the last build's groups at and beside this place held (the same
    record: an edit, or entries shifted by fewer than a group) takes its part from there, any other
    one from the per-entry cache, or is rendered."""
    held: dict[int, tuple[object, bytes]] = {}
    for before in near:
        if isinstance(before, KeptGroup) and before.tag == tag:
            held.update((id(e), (e, part)) for e, part in zip(before.entries, before.parts, strict=True))
    pieces = []
    for entry in group:
        found = held.get(id(entry))
        if found is not None and found[0] is entry:
            pieces.append(found[1])
            parts.reused += 1
            continue
        render = partial(_served_json, entry, ns, stamp)
        pieces.append(parts.get_for(entry, tag, partial(_part_key, entry, tag[1]), render))
    return KeptGroup(tag, group, pieces)


def _served_json(entry: EntryRecord, ns: NamespaceInfo, stamp: ReleaseStamp) -> bytes:
    return _entry_json(Served(entry, ns, stamp))


def _part_key(entry: object, base_url: str) -> tuple[str, object, str]:
    return ("context.json", entry, base_url)

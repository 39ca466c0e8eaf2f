"""A release's entries as one flat buffer that processes can map and share, read an entry at a time.

Held as Python objects, the entries of a 100,000-entry release take about 220 MiB in every worker
process. Packed here (each entry one orjson record, after the byte offsets of all of them, in the
index's container format), the buffer can be a memory-mapped file: every worker of a host reads
the same page-cache pages, and an entry becomes an ``EntryRecord`` only when a request reads it.
"""

from __future__ import annotations

import mmap
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, overload

import numpy as np
import orjson

from knowledge.retrieval.container import ContainerError, pack_arrays, unpack_arrays
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.render.site import snapshot_from_artifacts
from knowledge.retrieval.snapshot import EntryRecord

KIND = "entries"
FORMAT = 1
FIELDS = tuple(f.name for f in fields(EntryRecord))
# Fields held as tuples in an EntryRecord (JSON gives lists).
TUPLE_FIELDS = frozenset(f.name for f in fields(EntryRecord) if str(f.type).startswith("tuple"))
TABLE_LAYOUT = f"{KIND}.{FORMAT}." + ",".join(FIELDS)  # what a table file made by this code holds
PARSED_MAX = 4096  # entries kept parsed per table: the ones packs keep asking for


def pack_entries(entries: Iterable[EntryRecord], tombstones: Iterable[Tombstone] = ()) -> bytes:
    """The table's bytes (the release's few tombstones ride in its header): same input, same bytes."""
    records = [orjson.dumps([getattr(entry, name) for name in FIELDS]) for entry in entries]
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(record) for record in records], out=offsets[1:])
    blob = np.frombuffer(b"".join(records), dtype=np.uint8)
    meta = {"kind": KIND, "format": FORMAT, "fields": list(FIELDS), "retired": [asdict(t) for t in tombstones]}
    return pack_arrays(meta, {"offsets": offsets, "blob": blob})


class EntryTable(Sequence[EntryRecord]):
    """Entries by position, parsed from the buffer on first use (the most recent PARSED_MAX are kept)."""

    def __init__(self, buffer: bytes | mmap.mmap) -> None:
        meta, arrays = unpack_arrays(buffer)
        if meta.get("kind") != KIND or meta.get("format") != FORMAT or tuple(meta.get("fields", ())) != FIELDS:
            raise ContainerError("not an entry table of this version")
        self.tombstones = tuple(Tombstone(**t) for t in meta["retired"])
        self._offsets = arrays["offsets"]
        self._blob = arrays["blob"]
        self._count = len(self._offsets) - 1
        self._parsed: OrderedDict[int, EntryRecord] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, position: int) -> EntryRecord: ...

    @overload
    def __getitem__(self, position: slice) -> tuple[EntryRecord, ...]: ...

    def __getitem__(self, position: int | slice) -> EntryRecord | tuple[EntryRecord, ...]:
        if isinstance(position, slice):
            return tuple(self._record(p) for p in range(*position.indices(self._count)))
        if position < 0:
            position += self._count
        if not 0 <= position < self._count:
            raise IndexError(position)
        with self._lock:
            found = self._parsed.get(position)
        if found is None:
            found = self._record(position)
            with self._lock:
                self._parsed[position] = found
                if len(self._parsed) > PARSED_MAX:
                    self._parsed.popitem(last=False)
        return found

    def __iter__(self) -> Iterator[EntryRecord]:
        """Every entry, parsed anew and not kept (load-time scans and whole-release files)."""
        return (self._record(p) for p in range(self._count))

    def _record(self, position: int) -> EntryRecord:
        start, end = int(self._offsets[position]), int(self._offsets[position + 1])
        values = orjson.loads(self._blob[start:end].tobytes())
        named: dict[str, Any] = {
            name: tuple(value) if name in TUPLE_FIELDS else value for name, value in zip(FIELDS, values, strict=True)
        }
        return EntryRecord(**named)


def write_entry_table(*, site_json: Path, context_json: Path, table: Path) -> None:
    """Parse a release's site.json and context.json files and write its entry table (see main)."""
    parsed, _ = snapshot_from_artifacts(site_json=site_json.read_bytes(), context_json=context_json.read_bytes())
    table.write_bytes(pack_entries(parsed.entries, parsed.tombstones))


def main(argv: Sequence[str]) -> int:
    """``python -m knowledge.retrieval.entry_table <site.json> <context.json> <table>``: run by the worker
    that makes a table, so the hundreds of MiB of objects parsing a large context.json takes are a
    short-lived process's, returned to the system when it exits, not the worker's for good."""
    site_json, context_json, table = (Path(arg) for arg in argv)
    write_entry_table(site_json=site_json, context_json=context_json, table=table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

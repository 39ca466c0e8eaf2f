"""A release's entries as one flat buffer that processes can map and share, read an entry at a time.

Held as Python objects, the entries of a 100,000-entry release take about 220 MiB in every worker
process. Packed here (each entry one orjson record, after the byte offsets of all of them, in the
index's container format), the buffer can be a memory-mapped file: every worker of a host reads
the same page-cache pages, and an entry becomes an ``EntryRecord`` only when a request reads it.

The header also carries the few fields loading a release reads of every entry (EntryColumns: IDs,
layers, valid-until dates, path globs), so loading parses no entry: scanning the table for them
parsed every entry six times, most of a switch at 10,000 entries.
"""

from __future__ import annotations

import io
import mmap
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, overload

import numpy as np
import orjson

from knowledge.retrieval.container import ContainerError, array_padding, arrays_header, unpack_arrays
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.render.site import snapshot_from_artifacts
from knowledge.retrieval.snapshot import EntryRecord, Placed
from knowledge.retrieval.tiers import expired_on

KIND = "entries"
FORMAT = 2  # 2: the header carries the entries' columns
FIELDS = tuple(f.name for f in fields(EntryRecord))
# Fields held as tuples in an EntryRecord (JSON gives lists).
TUPLE_FIELDS = frozenset(f.name for f in fields(EntryRecord) if str(f.type).startswith("tuple"))
_fields_of = attrgetter(*FIELDS)  # an entry's fields in FIELDS order, as a tuple (orjson writes it as a list)
TABLE_LAYOUT = f"{KIND}.{FORMAT}." + ",".join(FIELDS)  # what a table file made by this code holds
PARSED_MAX = 4096  # entries kept parsed per table: the ones packs keep asking for
COPY_BYTES = 1024 * 1024  # runs copied from the kept table are written a slice at a time
JOIN_BYTES = 256 * 1024  # short records are joined about this much at a time before they are written
KEEP_BYTES = 8 * 1024 * 1024  # serialised records kept between the table's two passes; the rest serialised twice


Scoped = tuple[int, tuple[str, ...], float]  # an entry with path globs: its position, globs and confidence


@dataclass(frozen=True, slots=True)
class EntryColumns:
    """What loading a release reads of every entry: IDs (lookups, nearest IDs), layers and path globs
    (the path scope), valid-until dates (which entries a pack may hold)."""

    ids: list[str]
    layers: list[str | None]
    valid_until: dict[int, str]  # only the positions that have one
    scoped: list[Scoped]  # only the entries with globs, by position

    @classmethod
    def of(cls, entries: Iterable[EntryRecord]) -> EntryColumns:
        entries = entries if isinstance(entries, Sequence) else list(entries)
        return cls(
            ids=[entry.id for entry in entries],
            layers=[entry.layer for entry in entries],
            valid_until={p: e.valid_until for p, e in enumerate(entries) if e.valid_until is not None},
            scoped=[(p, tuple(e.paths), e.confidence) for p, e in enumerate(entries) if e.paths],
        )

    def add(self, position: int, entry: EntryRecord) -> None:
        """Append the entry at `position` (columns being made: EntryColumns.of, write_entries)."""
        self.ids.append(entry.id)
        self.layers.append(entry.layer)
        if entry.valid_until is not None:
            self.valid_until[position] = entry.valid_until
        if entry.paths:
            self.scoped.append((position, tuple(entry.paths), entry.confidence))

    def packable(self, *, revision: str) -> list[int] | None:
        """The positions a pack may hold (tiers.packable), or None when that is all of them."""
        gone = {p for p, until in self.valid_until.items() if expired_on(until, revision=revision)}
        return None if not gone else [p for p in range(len(self.ids)) if p not in gone]

    def picked(self, positions: Sequence[int]) -> EntryColumns:
        """The columns of the entries at `positions`, numbered from 0 in that order."""
        new = {old: p for p, old in enumerate(positions)}
        return EntryColumns(
            ids=[self.ids[p] for p in positions],
            layers=[self.layers[p] for p in positions],
            valid_until={new[p]: until for p, until in self.valid_until.items() if p in new},
            scoped=[(new[p], paths, confidence) for p, paths, confidence in self.scoped if p in new],
        )

    def as_meta(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "layers": list(self.layers),
            "validUntil": sorted(self.valid_until.items()),
            "scoped": [[p, list(paths), confidence] for p, paths, confidence in self.scoped],
        }

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> EntryColumns:
        return cls(
            ids=list(meta["ids"]),
            layers=list(meta["layers"]),
            valid_until={int(p): str(until) for p, until in meta["validUntil"]},
            scoped=[(int(p), tuple(paths), float(confidence)) for p, paths, confidence in meta["scoped"]],
        )


class TableReuse:
    """Where each entry of the last table a process wrote is, so the next table copies the records of
    the same entries from that file instead of serialising them again (a one-entry build writes one).

    Entries are matched by identity (snapshot.Placed): an EntryRecord is immutable and the snapshot reader
    hands a build the same object for an unchanged entry version (a changed, moved or retired entry is
    another object or none), so a copied record is the record serialising it gives. The file is named by
    its content and never changes (knowledge.selectors.release_files); when it is gone or not a table of
    this code, every record is serialised. `reused` counts the last table's copied records.
    """

    def __init__(self) -> None:
        # The kept table's path and its entries placed: one attribute, so a build in another thread reads
        # both of the same table.
        self._kept: tuple[Path, Placed] | None = None
        self.reused = 0

    def kept(self, path: Path, entries: Sequence[EntryRecord]) -> None:
        """`path` holds the table of `entries` (in that order): the next table may copy from it."""
        placed = self._kept[1] if self._kept is not None else Placed()
        self._kept = (path, placed.then(entries, placed.moved(entries)))

    def forget(self) -> None:
        self._kept = None

    def previous(self) -> tuple[memoryview, np.ndarray, Placed, mmap.mmap] | None:
        """The kept table's records, offsets, entries placed, and its mapping; None when it cannot be read."""
        kept = self._kept
        if kept is None:
            return None
        path, placed = kept
        try:
            with open(path, "rb") as file:
                buffer = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            meta, arrays = unpack_arrays(buffer)
            if meta.get("kind") != KIND or meta.get("format") != FORMAT or tuple(meta.get("fields", ())) != FIELDS:
                return None
            blob, offsets = memoryview(arrays["blob"].data), arrays["offsets"]
        except (OSError, ValueError, KeyError):  # ContainerError is a ValueError; so is mapping an empty file
            return None
        return (blob, offsets, placed, buffer) if len(offsets) - 1 == len(placed.records) else None


def pack_entries(entries: Iterable[EntryRecord], tombstones: Iterable[Tombstone] = ()) -> bytes:
    """The table's bytes (the release's few tombstones ride in its header): same input, same bytes."""
    out = io.BytesIO()
    write_entries(out, entries, tombstones)
    return out.getvalue()


def write_entries(
    out: BinaryIO,
    entries: Iterable[EntryRecord],
    tombstones: Iterable[Tombstone],
    *,
    reuse: TableReuse | None = None,
) -> None:
    """Write the table (pack_entries' bytes) to `out`, its records once. The header holds their offsets,
    so every record's length is known first: a copied record's from the kept table's offsets, a
    serialised one's by serialising it. Serialised records are kept for the second pass up to
    KEEP_BYTES and serialised again past that (a full build's records are over 100 MB at 100,000
    entries; spooling them all to a file and copying it wrote them twice). With `reuse`, the records of
    the entries of its kept table are copied from that file, a run of neighbours at a time."""
    entries = entries if isinstance(entries, Sequence) else list(entries)
    columns = EntryColumns.of(entries)
    previous = reuse.previous() if reuse is not None else None
    blob, old_offsets, placed, mapped = (
        previous if previous is not None else (memoryview(b""), np.zeros(1, np.int64), Placed(), None)
    )
    olds = _kept_positions(placed, entries)
    copied = olds >= 0
    lengths = np.zeros(len(entries), dtype=np.int64)
    lengths[copied] = np.diff(old_offsets)[olds[copied]]
    fresh = np.flatnonzero(~copied).tolist()
    serialised = _serialised(entries, fresh, lengths)
    if reuse is not None:
        reuse.reused = len(entries) - len(fresh)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    size = int(offsets[-1])
    meta = {
        "kind": KIND,
        "format": FORMAT,
        "fields": list(FIELDS),
        "retired": [asdict(t) for t in tombstones],
        "columns": columns.as_meta(),
    }
    out.write(arrays_header(meta, {"blob": ("|u1", (size,)), "offsets": ("<i8", offsets.shape)}))
    # A run is one record serialised here or neighbours in the kept table, copied as one slice.
    breaks = np.ones(len(entries), dtype=bool)
    breaks[1:] = ~(copied[1:] & copied[:-1] & (olds[1:] == olds[:-1] + 1))
    starts, positions = np.flatnonzero(breaks).tolist(), olds.tolist()
    ends = [*starts[1:], len(entries)] if starts else []
    batch: list[bytes | memoryview] = []
    held = written = 0
    for start, end in zip(starts, ends, strict=True):
        if positions[start] < 0:
            record = serialised.pop(start, None)
            piece: bytes | memoryview = record if record is not None else orjson.dumps(_fields_of(entries[start]))
        else:
            piece = blob[int(old_offsets[positions[start]]) : int(old_offsets[positions[end - 1] + 1])]
        written += len(piece)
        if len(piece) >= JOIN_BYTES:  # a long run (most of the table in a one-entry build): never joined
            if batch:
                _records_write(out, b"".join(batch), mapped)
                batch, held = [], 0
            _records_write(out, piece, mapped)
            continue
        batch.append(piece)
        held += len(piece)
        if held >= JOIN_BYTES:
            _records_write(out, b"".join(batch), mapped)
            batch, held = [], 0
    _records_write(out, b"".join(batch), mapped)
    del blob, batch, mapped
    if written != size:  # an entry serialised to other bytes the second time: the header would lie
        raise ValueError(f"the entry records came to {written} bytes, not the {size} their offsets hold")
    out.write(array_padding(size))
    out.write(offsets.tobytes())
    out.write(array_padding(offsets.nbytes))


def _kept_positions(placed: Placed, entries: Sequence[EntryRecord]) -> np.ndarray:
    """Each entry's position in the kept table (`placed`), or -1 when its record is serialised here."""
    moved = placed.moved(entries)
    if moved is None:
        where = placed.where
        return np.fromiter((-1 if (p := where(e)) is None else p for e in entries), dtype=np.int64, count=len(entries))
    olds = np.arange(len(entries), dtype=np.int64)
    for position in moved:
        found = placed.where(entries[position])
        olds[position] = -1 if found is None else found
    return olds


def _serialised(entries: Sequence[EntryRecord], fresh: list[int], lengths: np.ndarray) -> dict[int, bytes]:
    """Serialise the records of the entries at `fresh`, setting their `lengths`: those kept for the
    second pass (up to KEEP_BYTES), by position."""
    kept: dict[int, bytes] = {}
    held = 0
    for position in fresh:
        record = orjson.dumps(_fields_of(entries[position]))
        lengths[position] = len(record)
        if held + len(record) <= KEEP_BYTES:
            kept[position] = record
            held += len(record)
    return kept


def _records_write(out: BinaryIO, data: bytes | memoryview, mapped: mmap.mmap | None) -> None:
    """Write `data` (records serialised here, or a run copied from the kept table's mapping `mapped`) a
    slice at a time, letting go of the mapping's pages after each: they are read once, and resident they
    were the whole kept table (about 100 MB at 100,000 entries) beside the build."""
    if mapped is None or len(data) <= COPY_BYTES:
        out.write(data)
    else:
        view = memoryview(data)
        for start in range(0, len(view), COPY_BYTES):
            out.write(view[start : start + COPY_BYTES])
            mapped.madvise(mmap.MADV_DONTNEED)
    if mapped is not None:
        mapped.madvise(mmap.MADV_DONTNEED)


class Positional(Sequence[EntryRecord]):
    """Entries by position (negative from the end, slices as tuples), each read by ``_at``."""

    def __len__(self) -> int:
        raise NotImplementedError

    def _at(self, position: int) -> EntryRecord:
        raise NotImplementedError

    @overload
    def __getitem__(self, position: int) -> EntryRecord: ...

    @overload
    def __getitem__(self, position: slice) -> tuple[EntryRecord, ...]: ...

    def __getitem__(self, position: int | slice) -> EntryRecord | tuple[EntryRecord, ...]:
        count = len(self)
        if isinstance(position, slice):
            return tuple(self._at(p) for p in range(*position.indices(count)))
        if position < 0:
            position += count
        if not 0 <= position < count:
            raise IndexError(position)
        return self._at(position)


class EntryTable(Positional):
    """Entries by position, parsed from the buffer on first use (the most recent PARSED_MAX are kept)."""

    def __init__(self, buffer: bytes | mmap.mmap) -> None:
        meta, arrays = unpack_arrays(buffer)
        if meta.get("kind") != KIND or meta.get("format") != FORMAT or tuple(meta.get("fields", ())) != FIELDS:
            raise ContainerError("not an entry table of this version")
        self.tombstones = tuple(Tombstone(**t) for t in meta["retired"])
        self.columns = EntryColumns.from_meta(meta["columns"])
        self._offsets = arrays["offsets"]
        self._blob = arrays["blob"]
        self._count = len(self._offsets) - 1
        self._parsed: OrderedDict[int, EntryRecord] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    def _at(self, position: int) -> EntryRecord:
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


class Picked(Positional):
    """Some of a sequence's entries, by position, read from it on use (the packable ones of a table)."""

    def __init__(self, entries: Sequence[EntryRecord], positions: Sequence[int]) -> None:
        self._entries = entries
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    def _at(self, position: int) -> EntryRecord:
        return self._entries[self._positions[position]]


def write_entry_table(*, site_json: Path, context_json: Path, table: Path) -> None:
    """Parse a release's site.json and context.json files and write its entry table (see main)."""
    parsed, _ = snapshot_from_artifacts(site_json=site_json.read_bytes(), context_json=context_json.read_bytes())
    entries_file_write(table, parsed.entries, parsed.tombstones)


def entries_file_write(
    path: Path, entries: Iterable[EntryRecord], tombstones: Iterable[Tombstone], *, reuse: TableReuse | None = None
) -> None:
    """The table written to `path` (its records copied from `reuse`'s kept table where they can be)."""
    with open(path, "wb") as out:
        write_entries(out, entries, tombstones, reuse=reuse)


def main(argv: Sequence[str]) -> int:
    """``python -m knowledge.retrieval.entry_table <site.json> <context.json> <table>``: run by the worker
    that makes a table, so the hundreds of MiB of objects parsing a large context.json takes are a
    short-lived process's, returned to the system when it exits, not the worker's for good."""
    site_json, context_json, table = (Path(arg) for arg in argv)
    write_entry_table(site_json=site_json, context_json=context_json, table=table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

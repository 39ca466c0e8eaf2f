"""Per-entry rendered parts kept between builds, so a one-entry publish renders one entry again.

A part is keyed by everything its bytes depend on (the entry record and what of the namespace it
reads), so a hit is always the bytes a full rendering would give. Each build keeps only the parts it
used; memory is about the size of the parts (context.json's entries).

A one-entry build looks up every entry's part: hashing a key holds all of the record's fields (a
tuple of twenty made and hashed per entry, 4 µs each). Snapshot reads hand the same record objects
to the next build (knowledge.services.releases keeps them by version), so `get_for` first asks by the
record's identity (its id() and an `is` check; the record is held, so its id is not reused) and
hashes the key only for records it has not seen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class KeptGroup:
    """A run of entries' parts kept as one file (context.json's entries, a few hundred at a time): the
    parts are the same bytes objects the per-entry cache held, so keeping both costs no copy."""

    tag: tuple[str, str]  # (part kind, base URL): each part's key is (kind, entry, base URL)
    entries: tuple[object, ...]
    parts: list[bytes]

    def joined(self) -> bytes:
        return b",".join(self.parts)


class PartsCache:
    """Rendered bytes by key, for one namespace; `rendered`/`reused` count the last build's parts."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a build's files are kept within its parts' building()
        self._parts: dict[Hashable, bytes] = {}
        self._used: dict[Hashable, bytes] | None = None
        # (id(record), tag) -> (record, key, bytes): the parts of the records of the last build.
        self._by_record: dict[tuple[int, Hashable], tuple[object, Hashable, bytes]] = {}
        self._by_record_used: dict[tuple[int, Hashable], tuple[object, Hashable, bytes]] | None = None
        # name -> (key, file): whole files kept between builds (the sitemap's parts), compared by key.
        self._files: dict[str, tuple[object, object]] = {}
        self._files_used: dict[str, tuple[object, object]] | None = None
        self.rendered = 0
        self.reused = 0

    def __len__(self) -> int:
        return len(self._parts)

    def items(self) -> list[tuple[Hashable, bytes]]:
        """The kept parts (for keeping them on disk), those of kept groups included."""
        with self._lock:
            found = list(self._parts.items())
            for _, held in self._files.values():
                if isinstance(held, KeptGroup):
                    found += [
                        ((held.tag[0], entry, held.tag[1]), part)
                        for entry, part in zip(held.entries, held.parts, strict=True)
                    ]
            return found

    def kept_runs(self, kind: str) -> list[tuple[Sequence[object], str, Sequence[bytes]]]:
        """The kept parts of `kind` (a key's first item) as runs of (records, base URL, their parts):
        each kept group as it is, the other parts as one run per base URL. What `items` gives of them, without a
        key and a pair made per part (a worker's cache save after every build, issue 18 §3)."""
        with self._lock:
            # The single parts as one run per base URL: a run of one each was three tuples a part
            # (16 MB at 100,000 entries, held through a worker's first cache save, its peak).
            singles: dict[str, tuple[list[object], list[bytes]]] = {}
            for key, part in self._parts.items():
                if isinstance(key, tuple) and len(key) == 3 and key[0] == kind:
                    records, found = singles.setdefault(key[2], ([], []))
                    records.append(key[1])
                    found.append(part)
            runs: list[tuple[Sequence[object], str, Sequence[bytes]]] = [
                (records, url, found) for url, (records, found) in singles.items()
            ]
            for _, held in self._files.values():
                if isinstance(held, KeptGroup) and held.tag[0] == kind:
                    runs.append((held.entries, held.tag[1], held.parts))
            return runs

    def restore(self, items: Iterable[tuple[Hashable, bytes]]) -> None:
        """Keep these parts, as if an earlier build had rendered them (a worker's cache kept on disk)."""
        with self._lock:
            self._parts = dict(items)
            self._by_record, self._files = {}, {}

    def get(self, key: Hashable, render: Callable[[], bytes]) -> bytes:
        """The part's bytes: kept from an earlier build, or rendered now (and kept)."""
        found = self._parts.get(key)
        if found is None:
            found = render()
            self.rendered += 1
        else:
            self.reused += 1
        if self._used is not None:
            self._used[key] = found
        else:
            self._parts[key] = found
        return found

    def get_for(self, record: object, tag: Hashable, key: Callable[[], Hashable], render: Callable[[], bytes]) -> bytes:
        """get(key(), render), where the key is made of `record` and `tag` only: found by the record's
        identity when an earlier build used this very object with this tag."""
        slot = (id(record), tag)
        held = self._by_record.get(slot)
        if held is not None and held[0] is record:
            made, found = held[1], held[2]
            self.reused += 1
            if self._used is not None:
                self._used[made] = found
            else:
                self._parts[made] = found
        else:
            made = key()
            found = self.get(made, render)
        if self._by_record_used is not None:
            self._by_record_used[slot] = (record, made, found)
        return found

    def file(self, name: str, key: object, render: Callable[[], T]) -> T:
        """The file an earlier build rendered as `name` under a key equal to `key`, else render() (kept
        for the next build: a file stays only while each build uses it)."""
        held = self._files.get(name)
        found: T = held[1] if held is not None and held[0] == key else render()  # type: ignore[assignment]
        if self._files_used is not None:
            self._files_used[name] = (key, found)
        else:
            self._files[name] = (key, found)
        return found

    @contextmanager
    def building(self) -> Iterator[PartsCache]:
        """One build at a time; afterwards only the parts this build used are kept."""
        with self._lock:
            self._used, self.rendered, self.reused = {}, 0, 0
            self._by_record_used = {}
            try:
                yield self
                self._parts = self._used
                self._by_record = self._by_record_used
            finally:
                self._used = None
                self._by_record_used = None

    def file_held(self, name: str) -> object | None:
        """What the last build kept as `name` (None: nothing)."""
        held = self._files.get(name)
        return None if held is None else held[1]

    @contextmanager
    def building_files(self, prefix: str) -> Iterator[PartsCache]:
        """One build's files named `prefix`… at a time; afterwards only those this build used are kept."""
        with self._lock:
            self._files_used = {}
            try:
                yield self
                others = {name: held for name, held in self._files.items() if not name.startswith(prefix)}
                self._files = others | self._files_used
            finally:
                self._files_used = None

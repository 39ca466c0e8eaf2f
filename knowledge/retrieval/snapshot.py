"""What a release is built from: the namespace's data at one moment, as plain frozen records."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from operator import attrgetter, is_not
from typing import Generic, TypeVar

import orjson

from knowledge.retrieval import ENGINE_VERSION
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.documents import Document
from knowledge.retrieval.synonyms import SynonymSet

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CategoryInfo:
    slug: str
    name: str
    purpose: str


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    slug: str
    name: str
    prefix: str
    title: str
    summary: str
    contact: str
    license: str
    base_url: str
    language: str
    is_public: bool
    default_budget: int
    rules: tuple[str, ...]
    categories: tuple[CategoryInfo, ...]
    faq: tuple[tuple[str, str], ...] = ()

    def url(self, path: str) -> str:
        """An absolute URL under the namespace's canonical base URL."""
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")


@dataclass(frozen=True, slots=True)
class EntryRecord:
    """A published entry version as agents see it."""

    id: str
    category: str
    title: str
    summary: str
    body: str
    tags: tuple[str, ...]
    confidence: float
    tokens: int
    updated: str
    version: int
    content_hash: str
    links: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # matched like the title; not part of what agents receive
    # Provenance and freshness (issue 12): who vouched for this text, how sensitive it is, how long it holds.
    approved_at: str | None = None  # RFC 3339; None when the version's approval was never recorded
    review_state: str = "unrecorded"  # reviewed (four eyes) | self_approved | unrecorded
    sensitivity: str = "public"  # public | internal | restricted
    review_by: str | None = None  # ISO date: re-review due; past it, the entry is stale
    valid_until: str | None = None  # ISO date: past it, the entry leaves the packs
    # Conditional loading (issue 16 §2): the globs of the files the entry applies to; () = everywhere.
    paths: tuple[str, ...] = ()
    # Overlays (issue 16 §1): the namespace the entry came from (None: a namespace without bases), and
    # the base entry it replaces in this namespace.
    layer: str | None = None
    overrides: str | None = None

    def as_document(self) -> Document:
        return Document(
            id=self.id,
            category=self.category,
            title=self.title,
            summary=self.summary,
            body=self.body,
            tags=self.tags,
            confidence=self.confidence,
            tokens=self.tokens,
            links=self.links,
            aliases=self.aliases,
        )


def without_dead_links(entries: Sequence[EntryRecord]) -> tuple[EntryRecord, ...]:
    """Entries whose `links` name only entries of the same release: a link to a retired (or never
    published) ID would send agents to a 410 or 404 from inside the knowledge base."""
    live = {entry.id for entry in entries}
    kept = []
    for entry in entries:
        if not entry.links:  # most entries: no tuple made and compared (a build reads every entry)
            kept.append(entry)
            continue
        links = tuple(link for link in entry.links if link in live)
        kept.append(entry if links == entry.links else replace(entry, links=links))
    return tuple(kept)


@dataclass(frozen=True, slots=True)
class ThemeRecord:
    """An editor-defined theme (issue 16 §3): the first layer of a two-layer index over the entries."""

    slug: str  # a base's theme carried to a dependant: "<base>/<slug>" (knowledge.retrieval.layers)
    title: str
    summary: str
    entries: tuple[str, ...]  # entry IDs, in the editor's order
    layer: str = ""  # the namespace whose editors wrote it, when it came from a base


@dataclass(frozen=True, slots=True)
class DocRecord:
    slug: str
    title: str
    body: str


@dataclass(frozen=True, slots=True)
class RankingSettings:
    ranker: str = "bm25f"
    # None: each build calibrates the threshold itself (retrieval.calibration).
    match_threshold: float | None = None
    link_expansion: bool | None = None
    packing: str = "relevant"
    # How a namespace's own threshold was obtained (calibrate_threshold writes it), for the release.
    threshold_note: str = ""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a release's artifacts depend on, and nothing they do not."""

    namespace: NamespaceInfo
    # A tuple when built; a served release's may be an EntryTable (knowledge.retrieval.entry_table).
    entries: Sequence[EntryRecord]
    tombstones: tuple[Tombstone, ...] = ()
    docs: tuple[DocRecord, ...] = ()
    prompt_packs: tuple[tuple[str, str], ...] = ()
    ranking: RankingSettings = field(default_factory=RankingSettings)
    synonyms: tuple[SynonymSet, ...] = ()
    # IDs past review-by or valid-until on the snapshot's date (issue 12 §6): only in the inputs hash,
    # so the day an entry turns stale builds a new release although no content changed.
    due: tuple[str, ...] = ()
    themes: tuple[ThemeRecord, ...] = ()
    # The entries' token total and the sensitivity levels of its entries and tombstones, made on first
    # use: a build asks for each several times, a walk over every record each (7-10 ms at 100,000
    # entries). Not fields of the snapshot's content: no arguments, left out of comparisons and of
    # orjson's output (a leading underscore), and `replace()` starts a new snapshot without them.
    _total_tokens: int | None = field(default=None, init=False, repr=False, compare=False)
    _levels: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def inputs_hash(self, digests: EntryDigests | None = None) -> str:
        """A content hash of the snapshot and engine: equal hashes build byte-identical releases.

        The hash of the snapshot without its entries, then each entry's own digest (EntryDigests.of),
        so a build that keeps the digests of unchanged records hashes only the changed entries again
        (serialising every entry was half a second of a one-entry build at 100,000 entries). orjson
        writes the records' fields in their declared order (ten times faster than asdict).
        """
        digest = hashlib.sha256(orjson.dumps({"engine": ENGINE_VERSION, "snapshot": replace(self, entries=())}))
        digest.update(b"".join((digests or EntryDigests()).of(self.entries)))
        return digest.hexdigest()

    @property
    def total_tokens(self) -> int:
        total = self._total_tokens
        if total is None:
            total = sum(map(_TOKENS, self.entries))
            object.__setattr__(self, "_total_tokens", total)  # frozen: set once, as a cache
        return total

    @property
    def levels(self) -> frozenset[str]:
        """The sensitivity levels its entries and tombstones are at."""
        levels = self._levels
        if levels is None:
            levels = frozenset(map(_SENSITIVITY, self.entries)) | frozenset(map(_SENSITIVITY, self.tombstones))
            object.__setattr__(self, "_levels", levels)  # frozen: set once, as a cache
        return levels


_TOKENS = attrgetter("tokens")
_SENSITIVITY = attrgetter("sensitivity")


def entry_digest(entry: EntryRecord) -> bytes:
    """The SHA-256 of the record's JSON: every field, so any change to the record changes it."""
    return hashlib.sha256(orjson.dumps(entry)).digest()


@dataclass(frozen=True, slots=True)
class Placed:
    """Records in order, with each one's position by id, carried from one build's sequence to the next's.

    The snapshot reader hands the next build the same record object for an unchanged entry version (an
    EntryRecord is immutable, and the records here are held, so their ids are not reused), so a
    one-entry build's sequence holds the same records in the same places but one: `moved` finds that one
    in a single identity pass in C (operator.is_not over both sequences), and `then` moves its position
    only. Positions by id are made anew, in C, only when the count changes (25 ms at 100,000 records,
    what every build paid before). A position is used only if the record there is the very one, so the
    positions may miss a record listed twice, but never mislead."""

    records: tuple[EntryRecord, ...] = ()
    at: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Sequence[EntryRecord]) -> Placed:
        records = records if isinstance(records, tuple) else tuple(records)
        return cls(records, dict(zip(map(id, records), range(len(records)), strict=True)))

    def where(self, record: EntryRecord) -> int | None:
        """The position of this very record here, or None."""
        position = self.at.get(id(record))
        return position if position is not None and self.records[position] is record else None

    def moved(self, records: Sequence[EntryRecord]) -> list[int] | None:
        """The positions at which `records` holds another record than here; None when the counts differ."""
        if len(records) != len(self.records):
            return None
        return list(compress(range(len(records)), map(is_not, records, self.records)))

    def then(self, records: Sequence[EntryRecord], moved: list[int] | None) -> Placed:
        """`records` placed, given `moved`, what self.moved(records) gave."""
        if moved is None:
            return Placed.of(records)
        records = records if isinstance(records, tuple) else tuple(records)
        if not moved:
            return Placed(records, self.at)
        at = self.at.copy()
        for position in moved:
            if at.get(id(self.records[position])) == position:  # else it is found where it went
                del at[id(self.records[position])]
            at[id(records[position])] = position
        return Placed(records, at)


class KeptByRecord(Generic[T]):
    """Values made from entry records, kept between builds by record identity (Placed): a record's value
    is made once, while the record is in every call's sequence. Only the last call's records are kept;
    walking every one of them in Python cost 42 ms per call at 100,000 entries, and finding the one
    that changed about 7."""

    def __init__(self, make: Callable[[EntryRecord], T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._kept: tuple[Placed, list[T]] = (Placed(), [])

    def of(self, entries: Sequence[EntryRecord]) -> list[T]:
        """Each entry's value, in order: the one made for the same record last time, else made now."""
        entries = entries if isinstance(entries, tuple) else tuple(entries)
        with self._lock:
            placed, values = self._kept
        moved = placed.moved(entries)
        if moved is None:
            found = [self._kept_or_made(entry, placed, values) for entry in entries]
        else:
            found = list(values)
            for position in moved:
                found[position] = self._kept_or_made(entries[position], placed, values)
        with self._lock:
            self._kept = (placed.then(entries, moved), found)
        return list(found)

    def _kept_or_made(self, entry: EntryRecord, placed: Placed, values: list[T]) -> T:
        kept = placed.where(entry)
        return values[kept] if kept is not None else self._make(entry)


class EntryDigests(KeptByRecord[bytes]):
    """Each record's entry_digest, kept between builds (Snapshot.inputs_hash)."""

    def __init__(self) -> None:
        super().__init__(entry_digest)


@dataclass(frozen=True, slots=True)
class ReleaseStamp:
    """What a build adds to a snapshot: its identity and time, fixed before rendering."""

    sequence: int
    knowledge_version: str
    revision: str
    generated_at: str

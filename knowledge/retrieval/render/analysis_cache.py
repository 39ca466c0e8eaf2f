"""The analysed terms of a namespace's last build, kept as arrays so the next build collects them at once.

Analysing entry text (segmentation, stemming, stopwords) is most of compiling an index, and each
entry's terms depend on that entry alone. The cache keeps, per document, its occurrences as term ids
of one table shared by the namespace's documents (and the shape of its fields), so a build collects
the occurrences of the whole collection with a few array operations instead of one dictionary lookup
per occurrence, and hashes each term once per process. The collection it hands to the engine is what
postings.collect_terms gives (ids renumbered densely; the vocabulary orders them itself), so the
index is byte-identical to a full build's (tests/knowledge/test_incremental_release.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import pairwise
from operator import itemgetter
from typing import Any

import numpy as np

from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.container import Run
from knowledge.retrieval.documents import Document, document_key
from knowledge.retrieval.postings import CONTEXT_FIELDS, FIELDS, Analyze, Occurrences, analyze_fields
from knowledge.retrieval.snapshot import EntryRecord, KeptByRecord
from knowledge.retrieval.vocabulary import hash_term, pack_strings

logger = logging.getLogger(__name__)

Fields = tuple[list[list[str]], ...]  # what postings.analyze_fields returns for one document
_CONTEXT = tuple(name in CONTEXT_FIELDS for name in FIELDS)
COMPACT_GROUP = 1000  # documents whose term ids are joined at a time to mark the ids in use (_compact)


@dataclass(frozen=True, slots=True)
class _Analysed:
    """One document's occurrences: term ids in (field, part) order, and each part's length and sentence."""

    ids: np.ndarray  # int32, ids of the cache's term table
    part_lengths: np.ndarray  # int32, per part
    part_sentences: np.ndarray  # int32, per part: its sentence number, -1 in context fields
    field_parts: tuple[int, ...]  # parts per field
    lengths: np.ndarray  # int64, occurrences per field
    sentence_count: int


@dataclass(frozen=True, slots=True)
class Saved:
    """Analyses as `export` gave them, read back: the arrays may be views of a mapped file, which
    costs no memory until they are read. `live`: a mask of the documents to take (None: all)."""

    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]
    live: np.ndarray | None = None


class AnalysisCache:
    """The analysed terms of the documents of the last build that used this cache.

    Memory: four bytes per term occurrence and the term table (about 6 MB per 10,000 entries of the
    synthetic bench namespace). Each build keeps only the documents it used; the term table is
    compacted when most of it is no longer used.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._config: AnalyzerConfig | None = None
        self._entries: dict[bytes, _Analysed] = {}
        self._terms: list[str] = []
        self._hashes: list[int] = []
        self._ids: dict[str, int] = {}
        self._used: set[bytes] = set()
        # Analyses read back but not yet taken (restore_deferred), and the keys of their documents.
        self._pending: list[Saved] = []
        self._pending_keys: set[bytes] = set()
        # The last call of `documents`: each entry's document and key, kept by record.
        self._documents = KeptByRecord(_document)
        self.reused = 0
        self.analysed = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries) + len(self._pending_keys - self._entries.keys())

    def pending(self) -> bool:
        """Whether analyses read back are still left in their file (restore_deferred)."""
        with self._lock:
            return bool(self._pending)

    def documents(self, entries: Sequence[EntryRecord]) -> tuple[list[Document], list[bytes]]:
        """The entries' documents and their document_key, kept between builds by entry object (KeptByRecord):
        a record the snapshot reader kept is the same object in the next build
        (knowledge.selectors.snapshots), so only changed entries are made and hashed again. Only the last
        call's are kept: the tiers' entries nest (public within internal within restricted), so the widest
        holds every one."""
        made = self._documents.of(entries)
        return list(map(itemgetter(0), made)), list(map(itemgetter(1), made))

    def _store(self, fields: Fields) -> _Analysed:
        ids: list[int] = []
        part_lengths: list[int] = []
        part_sentences: list[int] = []
        sentence = 0
        for field_index, parts in enumerate(fields):
            for terms in parts:
                for term in terms:
                    found = self._ids.get(term)
                    if found is None:
                        found = self._ids[term] = len(self._terms)
                        self._terms.append(term)
                        self._hashes.append(hash_term(term))
                    ids.append(found)
                part_lengths.append(len(terms))
                part_sentences.append(-1 if _CONTEXT[field_index] else sentence)
                sentence += not _CONTEXT[field_index]
        return _Analysed(
            ids=np.array(ids, dtype=np.int32),
            part_lengths=np.array(part_lengths, dtype=np.int32),
            part_sentences=np.array(part_sentences, dtype=np.int32),
            field_parts=tuple(len(parts) for parts in fields),
            lengths=np.array([sum(len(terms) for terms in parts) for parts in fields], dtype=np.int64),
            sentence_count=sentence,
        )

    def _fields_of(self, stored: _Analysed) -> Fields:
        terms = [self._terms[i] for i in stored.ids.tolist()]
        result: list[list[list[str]]] = []
        at = part = 0
        lengths = stored.part_lengths.tolist()
        for count in stored.field_parts:
            parts = []
            for length in lengths[part : part + count]:
                parts.append(terms[at : at + length])
                at += length
            part += count
            result.append(parts)
        return tuple(result)

    def _analysed(self, document: Document, config: AnalyzerConfig, analyze: Analyze, counted: bool) -> _Analysed:
        """The document's stored analysis, analysing (and storing) it when it is new.

        `counted=False` is for the held-out copies calibration makes: they are kept like the
        documents (the next build makes the same copies of unchanged entries) but not counted in
        `reused`/`analysed`, which count the release's entries.
        """
        key = document_key(document)
        with self._lock:
            if config != self._config:  # another analyzer: nothing stored applies
                self._config, self._entries = config, {}
                self._terms, self._hashes, self._ids = [], [], {}
                self._pending, self._pending_keys = [], set()
            self._used.add(key)
            if key in self._pending_keys:
                self._take_pending()
            stored = self._entries.get(key)
            if stored is not None:
                self.reused += counted
                return stored
        fields = analyze(document, config)
        with self._lock:
            stored = self._entries[key] = self._store(fields)
            self.analysed += counted
        return stored

    def fields(self, document: Document, config: AnalyzerConfig, *, analyze: Analyze, counted: bool = True) -> Fields:
        """The document's analysed fields: from the cache, or from `analyze` (then stored)."""
        stored = self._analysed(document, config, analyze, counted)
        with self._lock:
            return self._fields_of(stored)

    def _collect(self, documents: Sequence[Document], config: AnalyzerConfig, *, counted: bool) -> Occurrences:
        found = [self._analysed(document, config, analyze_fields, counted) for document in documents]
        with self._lock:
            ids = np.concatenate([a.ids for a in found]) if found else np.zeros(0, dtype=np.int32)
            # np.unique(ids, return_inverse=True) without sorting the occurrences (14 M at 100,000
            # entries: its sort and permutation were about 400 MB): the table's ids in use, in order,
            # and each occurrence's rank among them.
            present = np.zeros(len(self._terms), dtype=bool)
            present[ids] = True
            used = np.flatnonzero(present)
            dense = (np.cumsum(present, dtype=np.int32) - 1)[ids]  # int32 as the table's ids: 4 bytes an occurrence
            del present, ids
            hashes = np.array(self._hashes, dtype=np.uint64)[used]
            terms = [self._terms[i] for i in used.tolist()]
        if found:
            part_lengths = np.concatenate([a.part_lengths for a in found])
            sentences = np.repeat(np.concatenate([a.part_sentences for a in found]), part_lengths)
            lengths = np.stack([a.lengths for a in found])
        else:
            sentences, lengths = np.zeros(0, dtype=np.int32), np.zeros((0, len(FIELDS)), dtype=np.int64)
        return Occurrences(
            terms=terms,
            term_ids=dense,  # owned, not a view: posting_rows cuts it as it goes
            sentences=sentences,
            lengths=lengths,
            sentence_counts=np.array([a.sentence_count for a in found], dtype=np.int64),
            hashes=hashes,
        )

    def collect(self, documents: Sequence[Document], config: AnalyzerConfig) -> Occurrences:
        """The collection's occurrences (postings.Collect), analysing only the documents not seen before."""
        return self._collect(documents, config, counted=True)

    def collect_uncounted(self, documents: Sequence[Document], config: AnalyzerConfig) -> Occurrences:
        """Like collect, without counting: for the held-out copies calibration compiles."""
        return self._collect(documents, config, counted=False)

    def _compact(self) -> None:
        """Drop the terms no kept document uses, once they are most of the table."""
        # The ids in use marked, a group of documents at a time: np.unique of every occurrence joined
        # sorted a copy of them (14 M at 100,000 entries: 1.7 s and 109 MiB after each full build).
        kept = list(self._entries.values())
        present = np.zeros(len(self._terms), dtype=bool)
        for start in range(0, len(kept), COMPACT_GROUP):
            present[np.concatenate([a.ids for a in kept[start : start + COMPACT_GROUP]])] = True
        used = np.flatnonzero(present)
        if 2 * len(used) >= len(self._terms):
            return
        renumber = np.zeros(len(self._terms), dtype=np.int32)
        renumber[used] = np.arange(len(used), dtype=np.int32)
        self._entries = {
            key: _Analysed(
                renumber[a.ids], a.part_lengths, a.part_sentences, a.field_parts, a.lengths, a.sentence_count
            )
            for key, a in self._entries.items()
        }
        self._terms = [self._terms[i] for i in used.tolist()]
        self._hashes = [self._hashes[i] for i in used.tolist()]
        self._ids = {term: i for i, term in enumerate(self._terms)}

    def document_keys(self) -> list[bytes]:
        """The kept documents' keys (document digests), in the order `export` writes them."""
        with self._lock:
            self._take_pending()
            return list(self._entries)

    def config(self) -> dict[str, Any] | None:
        """The analyzer configuration the kept analyses were made with, as `export` records it."""
        with self._lock:
            return asdict(self._config) if self._config is not None else None

    def export(self, only: Collection[bytes] | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray | Run]]:
        """The cache as metadata and arrays (for container.pack_pieces): what `restore` takes back.

        `only`: just these documents (those kept), with a term table of the terms they use alone
        (a worker's delta of its caches on disk, knowledge.services.build_cache)."""
        with self._build_lock, self._lock:
            self._take_pending()
            kept = (
                list(self._entries.items()) if only is None else [(k, a) for k, a in self._entries.items() if k in only]
            )
            analysed = [a for _, a in kept]
            meta = {"config": asdict(self._config) if self._config is not None else None}

            def joined(name: str, dtype: type) -> np.ndarray:
                parts = [getattr(a, name) for a in analysed]
                return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

            ids: np.ndarray | Run
            if only is None:  # every document's ids as they are held, never joined: 56 MB at 100,000 entries
                ids = Run("<i4", sum(len(a.ids) for a in analysed), (_little_int32(a.ids) for a in analysed))
                terms, hashes = self._terms, np.array(self._hashes, dtype=np.uint64)
            else:  # renumbered into a table of the terms these documents use
                used, ids = np.unique(joined("ids", np.int32), return_inverse=True)
                ids = ids.astype(np.int32, copy=False)
                terms = [self._terms[i] for i in used.tolist()]
                hashes = np.array([self._hashes[i] for i in used.tolist()], dtype=np.uint64)
            blob, offsets = pack_strings(terms)
            arrays = {
                "keys": np.frombuffer(b"".join(key for key, _ in kept), dtype=np.uint8),
                "ids": ids,
                "id_counts": np.array([len(a.ids) for a in analysed], dtype=np.int64),
                "part_lengths": joined("part_lengths", np.int32),
                "part_sentences": joined("part_sentences", np.int32),
                "field_parts": np.array([a.field_parts for a in analysed], dtype=np.int64).reshape(-1, len(FIELDS)),
                "lengths": np.array([a.lengths for a in analysed], dtype=np.int64).reshape(-1, len(FIELDS)),
                "sentence_counts": np.array([a.sentence_count for a in analysed], dtype=np.int64),
                "term_blob": blob,
                "term_offsets": offsets,
                "term_hashes": hashes,
            }
            return meta, arrays

    def restore(self, meta: dict[str, Any], arrays: dict[str, np.ndarray], *, live: np.ndarray | None = None) -> None:
        """Take back what `export` gave (a worker's cache kept on disk): every document's analysis
        is keyed by its digest, so a document that changed meanwhile is analysed again. `live`: a
        mask of the documents to take (the others are left out)."""
        self.restore_deferred([Saved(meta, arrays, live)])
        with self._build_lock, self._lock:
            self._take_pending()

    def restore_deferred(self, saved: Sequence[Saved]) -> None:
        """Restore `saved` (a base, then what `export(only=...)` added to it) when a build first needs
        one of its documents, not now: a build that patches its index analyses only the changed
        entries, so it never reads the others' analyses (about 14 M term ids and a table of
        terms at 100,000 entries), and they are forgotten after it as any unused analysis is. Only
        the documents' keys are read now. Parts made with another analyzer than the first are left out."""
        if not saved:
            return
        config = _config_of(saved[0].meta)
        taken = [s for s in saved if _config_of(s.meta) == config]
        keys: set[bytes] = set()
        for s in taken:
            raw = s.arrays["keys"].tobytes()
            live = [True] * (len(raw) // 16) if s.live is None else s.live.tolist()
            keys.update(raw[n * 16 : n * 16 + 16] for n, take in enumerate(live) if take)
        with self._build_lock, self._lock:
            self._config, self._entries = config, {}
            self._terms, self._hashes, self._ids = [], [], {}
            self._pending, self._pending_keys = taken, keys

    def add(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bool:
        """Add what `export(only=...)` gave to what `restore` took back (their term tables merged);
        False, adding nothing, when it was made with another analyzer configuration."""
        with self._build_lock, self._lock:
            if _config_of(meta) != self._config:
                return False
            self._take_pending()
            self._pending = [Saved(meta, arrays)]
            self._take_pending()
        return True

    def _take_pending(self) -> None:
        """Take the analyses restore_deferred left in their file (with the lock held): their terms are
        added to the table, so the analyses made since keep their ids (a collect holds them). Their
        arrays are copied and the views let go, so the mapping goes with them."""
        if not self._pending:
            return
        pending, self._pending, self._pending_keys = self._pending, [], set()
        kept = (self._entries, list(self._terms), list(self._hashes), dict(self._ids))
        try:
            taken: dict[bytes, _Analysed] = {}
            for saved in pending:
                blob, bounds = saved.arrays["term_blob"].tobytes(), saved.arrays["term_offsets"].tolist()
                terms = [blob[a:b].decode() for a, b in pairwise(bounds)]
                table = self._merged_terms(terms, saved.arrays["term_hashes"].tolist())
                arrays = saved.arrays if table is None else dict(saved.arrays, ids=table[saved.arrays["ids"]])
                taken.update(self._unpacked(arrays, saved.live))
        except Exception as error:  # noqa: BLE001 (damaged analyses are analysed again, never a failed build)
            logger.warning("Analyses read back are unreadable, analysed again: %s", error)
            self._entries, self._terms, self._hashes, self._ids = kept
            return
        self._entries = taken | self._entries  # in the order restoring them first would have kept

    def _merged_terms(self, terms: list[str], hashes: list[int]) -> np.ndarray | None:
        """The id of each of `terms` in this cache's table, adding those it lacks (with the lock held);
        None when the table was empty and is now `terms` as they are."""
        if not self._terms:
            self._terms, self._hashes = list(terms), list(hashes)
            self._ids = {term: i for i, term in enumerate(terms)}
            return None
        table = np.zeros(len(terms), dtype=np.int32)
        for n, term in enumerate(terms):
            found = self._ids.get(term)
            if found is None:
                found = self._ids[term] = len(self._terms)
                self._terms.append(term)
                self._hashes.append(hashes[n])
            table[n] = found
        return table

    @staticmethod
    def _unpacked(arrays: dict[str, np.ndarray], live: np.ndarray | None) -> dict[bytes, _Analysed]:
        raw = arrays["keys"].tobytes()
        keys = [raw[n : n + 16] for n in range(0, len(raw), 16)]
        # One copy of each array, which the documents' views share: views of `arrays` would keep the
        # whole buffer they came from (a cache file also holds records and parts) alive.
        ids, part_lengths, part_sentences, lengths = (
            np.array(arrays[name]) for name in ("ids", "part_lengths", "part_sentences", "lengths")
        )
        id_ends = np.cumsum(arrays["id_counts"]).tolist()
        part_counts = arrays["field_parts"].sum(axis=1)
        part_ends = np.cumsum(part_counts).tolist()
        field_parts = arrays["field_parts"].tolist()
        sentence_counts = arrays["sentence_counts"].tolist()
        taken = [True] * len(keys) if live is None else live.tolist()
        entries: dict[bytes, _Analysed] = {}
        id_start = part_start = 0
        for n, (id_end, part_end) in enumerate(zip(id_ends, part_ends, strict=True)):
            if taken[n]:
                entries[keys[n]] = _Analysed(
                    ids=ids[id_start:id_end],
                    part_lengths=part_lengths[part_start:part_end],
                    part_sentences=part_sentences[part_start:part_end],
                    field_parts=tuple(field_parts[n]),
                    lengths=lengths[n],
                    sentence_count=sentence_counts[n],
                )
            id_start, part_start = id_end, part_end
        return entries

    @contextmanager
    def building(self) -> Iterator[None]:
        """One build at a time per cache; afterwards, forget documents the build did not use."""
        with self._build_lock:
            with self._lock:
                self._used = set()
                self.reused = self.analysed = 0
            yield
            with self._lock:
                # Analyses still pending were not used by this build: they are let go unread.
                self._pending, self._pending_keys = [], set()
                self._entries = {key: value for key, value in self._entries.items() if key in self._used}
                self._used = set()
                self._compact()


def _little_int32(ids: np.ndarray) -> memoryview:
    return np.ascontiguousarray(ids, dtype="<i4").data


def _config_of(meta: dict[str, Any]) -> AnalyzerConfig | None:
    return AnalyzerConfig.from_meta(meta["config"]) if meta.get("config") is not None else None


def _document(entry: EntryRecord) -> tuple[Document, bytes]:
    document = entry.as_document()
    return document, document_key(document)

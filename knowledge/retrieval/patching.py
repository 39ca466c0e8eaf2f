"""An index compiled by patching the previous one (issue 18 §3-4): only the changed entries are analysed,
and no sort of the whole collection's occurrences is made.

A posting's row (postings.PostingRows: its saturated weighted tf, seed weight and passage blocks)
depends only on its entry and on the lineage's reference statistics, and its impact is the term's
idf times that row's saturation. So with the reference statistics kept, the previous index's rows
of every unchanged entry are still right: its postings lose the rows of the changed and removed
entries, gain the rows of the changed and added ones (merged in at their place, term-major and
by position), and each term's idf follows its new document frequency. The result is byte for byte
the index a full compile of the same documents against the same reference statistics makes
(tests/retrieval/test_index_patching.py), and the posting lists of terms no change touches keep
their bytes, so content-defined chunk storage shares them between releases.

A patch is declined (None: compile in full) when the previous index lacks what it needs (an index
compiled before patching, or with other analysis or ranking parameters), when the reference
statistics drifted (a re-freeze is a full compile), when more than MAX_CHANGED of the entries
changed, when the unchanged entries moved relative to each other, or when a new term's hash equals
another term's.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import attrgetter

import numpy as np

from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.documents import Document
from knowledge.retrieval.hits import distinct_sorted
from knowledge.retrieval.index_format import IMPACTS
from knowledge.retrieval.postings import (
    FIELDS,
    Analyze,
    BM25FParams,
    Occurrences,
    PostingRows,
    Postings,
    ReferenceStats,
    assemble_postings,
    collect_terms,
    posting_rows,
    ranking_idf,
    term_slots,
)
from knowledge.retrieval.vocabulary import Vocabulary, hash_term

logger = logging.getLogger(__name__)

# Above this share of changed entries a full compile costs about as much as a patch.
MAX_CHANGED = 0.1


@dataclass(frozen=True)
class PreviousIndex:
    """What a patch reads of the previous index: its postings' rows, entries and reference statistics."""

    ids: list[str]
    keys: np.ndarray  # uint8 (docs, 16): documents.document_key of each entry
    lengths: np.ndarray  # int32 (docs, fields)
    vocabulary: Vocabulary
    order: np.ndarray
    offsets: np.ndarray
    docs: np.ndarray
    saturation: np.ndarray
    seed: np.ndarray
    blocks: np.ndarray
    reference: ReferenceStats
    # Lets go of the resident pages of the file the arrays are mapped from, once the patch has read them.
    release: Callable[[], None] = lambda: None
    # Derived arrays an edit in place carries over for the terms it does not touch (Carried).
    impacts: np.ndarray | None = None
    min_tokens: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        arrays: Mapping[str, np.ndarray],
        reference: ReferenceStats | None,
        release: Callable[[], None] = lambda: None,
    ) -> PreviousIndex | None:
        """From an index's arrays; None when it was compiled without what a patch needs. `release`: see above
        (SearchIndex.pages_let_go of a mapped index: the previous release's file, 111 MiB at 100k entries)."""
        needed = ("doc_keys", "doc_lengths", "post_saturation", "post_blocks", "term_order")
        if reference is None or any(name not in arrays for name in needed):
            return None
        blob, offsets = bytes(arrays["doc_id_blob"]), arrays["doc_id_offsets"].tolist()
        return cls(
            ids=[blob[start:end].decode() for start, end in pairwise(offsets)],
            keys=arrays["doc_keys"],
            lengths=arrays["doc_lengths"],
            vocabulary=Vocabulary(arrays["term_hashes"], arrays["term_blob"], arrays["term_offsets"]),
            order=arrays["term_order"],
            offsets=arrays["post_offsets"],
            docs=arrays["post_docs"],
            saturation=arrays["post_saturation"],
            seed=arrays["post_seed"],
            blocks=arrays["post_blocks"],
            reference=reference,
            release=release,
            impacts=arrays.get(IMPACTS),
            min_tokens=arrays.get("term_min_tokens"),
        )


@dataclass(frozen=True)
class _Entries:
    """Where the previous index's entries went: new position per old one (-1: changed or removed)."""

    moved: np.ndarray  # int64 per old position
    changed: np.ndarray  # int64 new positions whose rows are made again


_id_of = attrgetter("id")


def _entries(previous: PreviousIndex, documents: Sequence[Document], keys: np.ndarray) -> _Entries | None:
    ids = list(map(_id_of, documents))
    if ids == previous.ids:  # the usual publish: the same entries in the same places (compared in C)
        old = np.arange(len(ids), dtype=np.int64)
    else:
        position = {entry_id: i for i, entry_id in enumerate(previous.ids)}
        old = np.array([position.get(entry_id, -1) for entry_id in ids], dtype=np.int64)
    same = old >= 0
    same[same] = (previous.keys[old[same]] == keys[same]).all(axis=1)
    moved = np.full(len(previous.ids), -1, dtype=np.int64)
    moved[old[same]] = np.flatnonzero(same)
    kept = moved[moved >= 0]
    if np.any(np.diff(kept) <= 0):
        return None  # the unchanged entries are in another order: their rows would not stay sorted
    return _Entries(moved, np.flatnonzero(~same))


def _lengths(previous: PreviousIndex, entries: _Entries, changed: np.ndarray, count: int) -> np.ndarray:
    lengths = np.zeros((count, len(FIELDS)), dtype=np.int64)
    kept = entries.moved >= 0
    lengths[entries.moved[kept]] = previous.lengths[kept]
    lengths[entries.changed] = changed
    return lengths


@dataclass(frozen=True)
class _Terms:
    """The patched vocabulary, its string order, and where each previous and new term id went."""

    vocabulary: Vocabulary
    order: np.ndarray
    old_to_final: np.ndarray  # int64 per previous term id (-1: no entry holds it any more)
    local_to_final: np.ndarray  # int64 per term of the changed entries


def _any_known(known: np.ndarray, hashes: np.ndarray) -> bool:
    """Whether any of `hashes` is in `known` (sorted): a binary search each, where np.isin sorted or
    hashed the whole vocabulary on every patch (0.13 s of CPU at 100,000 entries, 231,633 terms)."""
    if not len(known) or not len(hashes):
        return False
    at = np.minimum(np.searchsorted(known, hashes), len(known) - 1)
    return bool((known[at] == hashes).any())


def _terms(previous: PreviousIndex, surviving: np.ndarray, local_terms: Sequence[str]) -> _Terms | None:
    """`surviving`: the previous terms some unchanged entry still holds."""
    old_of_local = np.array([previous.vocabulary.lookup(t) for t in local_terms], dtype=np.int64)
    keep = surviving.copy()
    keep[old_of_local[old_of_local >= 0]] = True
    new_local = np.flatnonzero(old_of_local < 0)
    new_hashes = np.array([hash_term(local_terms[int(i)]) for i in new_local], dtype=np.uint64)
    if len(np.unique(new_hashes)) < len(new_hashes) or _any_known(previous.vocabulary.hashes, new_hashes):
        return None  # equal hashes are ordered by term: left to a full compile
    by_hash = np.argsort(new_hashes, kind="stable")
    new_local, new_hashes = new_local[by_hash], new_hashes[by_hash]

    kept_hashes = previous.vocabulary.hashes[keep]
    before = np.searchsorted(kept_hashes, new_hashes, side="left")  # where each new term goes
    old_to_final = np.full(len(keep), -1, dtype=np.int64)
    old_to_final[keep] = np.arange(len(kept_hashes)) + np.searchsorted(new_hashes, kept_hashes, side="left")
    new_final = np.arange(len(new_hashes)) + before
    local_to_final = np.where(old_of_local >= 0, old_to_final[np.maximum(old_of_local, 0)], -1)
    local_to_final[new_local] = new_final

    term_lengths = np.diff(previous.vocabulary.offsets)
    kept_lengths = term_lengths[keep]
    kept_blob = previous.vocabulary.blob[np.repeat(keep, term_lengths)]
    kept_starts = np.concatenate([[0], np.cumsum(kept_lengths)])
    encoded = [local_terms[int(i)].encode() for i in new_local]
    new_lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    blob = np.insert(
        kept_blob, np.repeat(kept_starts[before], new_lengths), np.frombuffer(b"".join(encoded), dtype=np.uint8)
    )
    offsets = np.zeros(len(keep[keep]) + len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.insert(kept_lengths, before, new_lengths), out=offsets[1:])
    vocabulary = Vocabulary(np.insert(kept_hashes, before, new_hashes), blob, offsets)

    kept_order = old_to_final[previous.order[keep[previous.order]]]
    strings = sorted((local_terms[int(i)], int(local_to_final[i])) for i in new_local)
    places = [
        bisect.bisect_left(range(len(kept_order)), term, key=lambda i: vocabulary.term(int(kept_order[i])))
        for term, _ in strings
    ]
    order = np.insert(kept_order, np.array(places, dtype=np.int64), [final for _, final in strings])
    return _Terms(vocabulary, order.astype(np.int64), old_to_final, local_to_final)


_COLUMNS = ("terms", "docs", "saturation", "seed", "blocks")


def _merged(old: dict[str, np.ndarray], new: PostingRows, count: int) -> PostingRows:
    """Two row sets, each sorted by (term, doc) and with no (term, doc) in both, as one. `old` holds the
    columns of the previous index's kept rows, which it empties: each goes once its merged copy is made,
    so the two are never both held whole (at 100,000 entries each is about 17 bytes per posting)."""
    order = np.lexsort((new.docs, new.terms))
    key = old["terms"].astype(np.int64)
    key *= count
    key += old["docs"]
    at = np.searchsorted(key, new.terms[order].astype(np.int64) * count + new.docs[order])
    del key
    return PostingRows(**{name: np.insert(old.pop(name), at, getattr(new, name)[order]) for name in _COLUMNS})


@dataclass(frozen=True)
class _Splice:
    """Old rows without `removed` (sorted), new rows placed before the old row each `at` names (sorted):
    as slices copied once per column, not a boolean copy and an insert of each whole column."""

    segments: list[tuple[int, int, int]]  # (old start, old stop, output start)
    placed: np.ndarray  # int64 output position of each new row
    size: int

    @classmethod
    def of(cls, count: int, removed: np.ndarray, at: np.ndarray) -> _Splice:
        events = sorted([(int(x), 0, i) for i, x in enumerate(at)] + [(int(x), 1, 0) for x in removed])
        segments, placed = [], np.empty(len(at), dtype=np.int64)
        source = output = 0
        for where, kind, number in events:
            if where > source:
                segments.append((source, where, output))
                output += where - source
                source = where
            if kind == 0:
                placed[number] = output
                output += 1
            else:
                source = where + 1
        if count > source:
            segments.append((source, count, output))
            output += count - source
        return cls(segments, placed, output)

    def apply(self, column: np.ndarray, new: np.ndarray) -> np.ndarray:
        out = np.empty(self.size, dtype=column.dtype)
        for start, stop, to in self.segments:
            out[to : to + stop - start] = column[start:stop]
        out[self.placed] = new
        return out


@dataclass(frozen=True)
class Carried:
    """What an edit in place tells the compile, so it carries the previous index's derived arrays over
    for the terms the edit does not touch instead of deriving them again from every posting (at 100,000
    entries each such pass over 7.9 million postings cost 0.05-0.1 s of a one-entry build). The forward
    index is transposed again: carrying it over measured no cheaper, as renumbering its 7.9 million
    terms cost what scipy's transposition does."""

    old_to_final: np.ndarray  # int64 per previous term id: its id now (-1: gone)
    touched: np.ndarray  # sorted term ids whose rows the edit removed or made
    min_tokens: np.ndarray | None  # the previous index's term_min_tokens, when it has them


def _patched_in_place(
    previous: PreviousIndex, entries: _Entries, found: Occurrences, params: BM25FParams
) -> tuple[Postings, Carried] | None:
    """patched_postings when every unchanged entry keeps its position (an edit, the usual publish): the
    kept rows keep their doc numbers, so only the changed entries' rows are found, dropped and placed,
    and each term's document frequency follows from the old one (no pass makes a term per row); the
    impacts are the previous ones but for the touched terms'."""
    docs, offsets = previous.docs, previous.offsets
    if len(entries.changed) <= 8:
        gone = np.zeros(len(docs), dtype=bool)
        for position in entries.changed:
            gone |= docs == position
    else:
        gone = np.isin(docs, entries.changed)
    removed = np.flatnonzero(gone)
    del gone
    old_freq = np.diff(offsets)
    removed_old = np.searchsorted(offsets, removed, side="right") - 1  # each removed row's term
    removed_freq = np.bincount(removed_old, minlength=len(old_freq))
    terms = _terms(previous, old_freq > removed_freq, found.terms)
    if terms is None:
        return None
    local = posting_rows([found], np.arange(len(found.terms), dtype=np.int64), previous.reference, params)
    final = terms.local_to_final[local.terms]
    order = np.lexsort((entries.changed[local.docs], final))
    final, new_docs = final[order], entries.changed[local.docs][order]

    # Each new row's place among the old rows: the start of its term's rows (or of the next kept term's,
    # for a new term), then its doc among that term's docs.
    filled = np.maximum.accumulate(terms.old_to_final)
    old_term = np.searchsorted(filled, final, side="left")
    at = offsets[old_term].astype(np.int64)
    for row in np.flatnonzero(old_term < len(old_freq)):
        term = int(old_term[row])
        if terms.old_to_final[term] == final[row]:
            at[row] += int(np.searchsorted(docs[offsets[term] : offsets[term + 1]], new_docs[row]))
    splice = _Splice.of(len(docs), removed, at)
    new_docs = new_docs.astype(docs.dtype)
    saturation = splice.apply(previous.saturation, local.saturation[order])
    rows = PostingRows(
        terms=final,  # the new rows' only: assemble_postings is given the document frequencies
        docs=splice.apply(docs, new_docs),
        saturation=saturation,
        seed=splice.apply(previous.seed, local.seed[order]),
        blocks=splice.apply(previous.blocks, local.blocks[order]),
    )
    doc_freq = np.bincount(final, minlength=len(terms.vocabulary)).astype(np.int64)
    kept = terms.old_to_final >= 0
    doc_freq[terms.old_to_final[kept]] += (old_freq - removed_freq)[kept]
    # Terms the edit touched: those of the rows it removed (if they survive) and of the rows it made.
    removed_terms = terms.old_to_final[removed_old]
    touched = distinct_sorted(np.concatenate([removed_terms[removed_terms >= 0], final]))
    impacts = None
    if previous.impacts is not None:
        spliced = splice.apply(previous.impacts, np.zeros(len(final), dtype=previous.impacts.dtype))
        impacts = _impacts_carried(spliced, saturation, doc_freq, touched, previous.reference, params)
    previous.release()  # every posting column read: assembling the postings needs none of them
    logger.info("Index patched: %d of %d entries compiled again", len(entries.changed), len(entries.moved))
    postings = assemble_postings(
        terms.vocabulary, terms.order, rows, previous.reference, params, doc_freq=doc_freq, impacts=impacts
    )
    return postings, Carried(terms.old_to_final, touched, previous.min_tokens)


def _impacts_carried(
    impacts: np.ndarray,
    saturation: np.ndarray,
    doc_freq: np.ndarray,
    touched: np.ndarray,
    reference: ReferenceStats,
    params: BM25FParams,
) -> np.ndarray | None:
    """The previous impacts, spliced, with those of the `touched` terms made again (their document
    frequency, so their idf, may have changed; every other term's idf and rows are as they were):
    each is the term's ranking idf times its row's saturation, as assemble_postings makes them all.
    None when the stored impacts are not of the idf's type (then assemble_postings makes them all)."""
    idf = ranking_idf(doc_freq, reference.documents, params.idf_floor)  # whole, as assemble_postings: same values
    if idf.dtype != impacts.dtype:
        return None
    offsets = np.zeros(len(doc_freq) + 1, dtype=np.int64)
    np.cumsum(doc_freq, out=offsets[1:])
    slots = term_slots(offsets, touched)
    remade = np.repeat(idf[touched], doc_freq[touched])
    remade *= saturation[slots]
    impacts[slots] = remade
    return impacts


def patched_postings(
    previous: PreviousIndex,
    documents: Sequence[Document],
    keys: np.ndarray,
    *,
    config: AnalyzerConfig,
    params: BM25FParams,
    analyze: Analyze,
) -> tuple[Postings, np.ndarray, Carried | None] | None:
    """The postings and document lengths build_postings(documents, reference=previous.reference) gives,
    from the previous index and the changed entries alone, and what an edit in place carries (Carried);
    None when a patch does not apply (see above). `keys`: documents.document_key of each document, as
    the previous index stored them."""
    count = len(documents)
    entries = _entries(previous, documents, keys)
    if not count or entries is None or len(entries.changed) > MAX_CHANGED * count:
        return None
    found = collect_terms([documents[int(i)] for i in entries.changed], config, None, analyze)
    lengths = _lengths(previous, entries, found.lengths, count)
    if previous.reference.kept_for(ReferenceStats.measured(lengths)) != previous.reference:
        return None  # drifted: a re-freeze, which is a full compile

    kept = entries.moved >= 0
    if len(entries.moved) == count and np.array_equal(entries.moved[kept], np.flatnonzero(kept)):
        in_place = _patched_in_place(previous, entries, found, params)
        return None if in_place is None else (in_place[0], lengths, in_place[1])
    moved = entries.moved.astype(np.int32)  # int32 like the postings' docs: 4 bytes per posting below, not 8
    kept_rows = moved[previous.docs] >= 0
    kept_before = np.concatenate([[0], np.cumsum(kept_rows)])
    surviving = kept_before[previous.offsets[1:]] > kept_before[previous.offsets[:-1]]
    del kept_before
    terms = _terms(previous, surviving, found.terms)
    if terms is None:
        return None
    local = posting_rows([found], np.arange(len(found.terms), dtype=np.int64), previous.reference, params)
    new = PostingRows(
        terms=terms.local_to_final[local.terms],
        docs=entries.changed[local.docs],
        saturation=local.saturation,
        seed=local.seed,
        blocks=local.blocks,
    )
    old = {
        "terms": np.repeat(terms.old_to_final.astype(np.int32), np.diff(previous.offsets))[kept_rows],
        "docs": moved[previous.docs[kept_rows]],
        "saturation": previous.saturation[kept_rows],
        "seed": previous.seed[kept_rows],
        "blocks": previous.blocks[kept_rows],
    }
    del kept_rows
    rows = _merged(old, new, count)
    logger.info("Index patched: %d of %d entries compiled again", len(entries.changed), count)
    return assemble_postings(terms.vocabulary, terms.order, rows, previous.reference, params), lengths, None

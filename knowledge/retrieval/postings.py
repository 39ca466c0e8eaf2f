"""Compile documents into postings with precomputed BM25F and seed §4 impact weights per (term, doc)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from knowledge.retrieval.analysis import (
    AnalyzerConfig,
    analyze_tags,
    analyze_text,
    normalize_key,
    split_sentences,
)
from knowledge.retrieval.documents import Document
from knowledge.retrieval.vocabulary import Vocabulary

FIELDS = ("id", "title", "tags", "summary", "body", "aliases")
# Seed §4: id×8 / title×5 / tags×4 / summary×3 / body×min(occurrences, 6). Aliases are alternate
# titles, so the seed ranker weighs them like the title.
SEED_FIELD_WEIGHTS = (8, 5, 4, 3, 0, 5)
SEED_BODY_CAP = 6
SEED_WEIGHTS = np.array(SEED_FIELD_WEIGHTS)
# Passage blocks per entry for coverage (index.py): each summary/body sentence is a block, an entry
# with more sentences folds neighbouring ones together. The id, title and tags are the context of
# every sentence, so their terms are in every block.
BLOCKS = 32
CONTEXT_FIELDS = ("id", "title", "tags", "aliases")
ALL_BLOCKS = np.uint32(2**BLOCKS - 1)


@dataclass(frozen=True)
class BM25FParams:
    """Field weights in the spirit of the seed's (id > title > tags > summary > body) and BM25 knobs."""

    weights: tuple[float, ...] = (8.0, 5.0, 4.0, 3.0, 1.0, 5.0)
    # Length normalisation per field: none for the one-term id, little for short fields.
    b: tuple[float, ...] = (0.0, 0.5, 0.3, 0.6, 0.5, 0.5)
    # Higher than BM25's usual 1.2: field weights inflate the combined tf, so saturation comes
    # later (dev Cranfield nDCG@10 0.392 at 1.2 -> 0.400 at 2.0).
    k1: float = 2.0
    # The ranking's idf. None: Lucene's ln(1 + (N - df + 0.5) / (df + 0.5)). A number: Robertson-
    # Sparck Jones ln((N - df + 0.5) / (df + 0.5)) never below it, which falls faster for words in
    # many entries (df = N/2: 0 against 0.69), so "parameter", "return" count less beside the rarer
    # words of a question; the floor keeps every weight positive. Leave-one-collection-out chooses
    # it (docs/retrieval.md, `python -m bench quality`): pylibs dev nDCG@10 0.830 -> 0.840, hit rate
    # 0.890 -> 0.904, Cranfield and CMRC unchanged, every fold still matched >= 0.90 / refused >= 0.80
    # with the automatic threshold. Indexes record it in their params; those compiled before it
    # was the default keep Lucene's (SearchIndex.params). Coverage always uses Lucene's idf.
    idf_floor: float | None = 0.5

    def to_meta(self) -> dict[str, object]:
        return asdict(self)


# A lineage's reference statistics are kept while the collection's own stay within this share of them
# (the document count and each field's average length; a field averaging under one term counts as one).
REFERENCE_DRIFT = 0.02


@dataclass(frozen=True)
class ReferenceStats:
    """What impacts are normalised against: the document count idf is computed with and each field's
    average length. An index lineage keeps them from build to build (issue 18), so a change moves only
    the posting lists of the terms it touches; a build whose collection drifted beyond REFERENCE_DRIFT
    measures them again (re-freezes)."""

    documents: int
    field_lengths: tuple[float, ...]

    @classmethod
    def measured(cls, lengths: np.ndarray) -> ReferenceStats:
        """The statistics of a collection's (docs, fields) term counts."""
        if not len(lengths):  # an empty namespace has no lengths to average; 1.0 keeps divisions finite
            return cls(0, (1.0,) * len(FIELDS))
        return cls(len(lengths), tuple(float(a) for a in np.maximum(lengths.mean(axis=0), 1e-9)))

    def drift(self, other: ReferenceStats) -> float:
        """The largest relative difference between the two, count and field lengths alike."""
        drifts = [abs(other.documents - self.documents) / max(self.documents, 1)]
        drifts += [abs(b - a) / max(a, 1.0) for a, b in zip(self.field_lengths, other.field_lengths, strict=True)]
        return max(drifts)

    def kept_for(self, measured: ReferenceStats) -> ReferenceStats:
        """These statistics for a collection that measures `measured`, unless it drifted too far."""
        return self if self.drift(measured) <= REFERENCE_DRIFT else measured

    def to_meta(self) -> dict[str, object]:
        return {"documents": self.documents, "fieldLengths": list(self.field_lengths)}

    @classmethod
    def from_meta(cls, meta: dict[str, object] | None) -> ReferenceStats | None:
        if not meta:
            return None
        lengths = meta["fieldLengths"]
        assert isinstance(lengths, list)
        return cls(int(str(meta["documents"])), tuple(float(x) for x in lengths))


@dataclass(frozen=True)
class Postings:
    """Term -> documents, with one impact weight per ranker; docs are sorted inside each term."""

    vocabulary: Vocabulary
    offsets: np.ndarray  # int64, len(vocabulary) + 1
    docs: np.ndarray  # int32
    bm25f: np.ndarray  # float32, without the confidence factor
    seed: np.ndarray  # uint8: the seed's per-term weight, without the confidence factor
    idf: np.ndarray  # float32, per term
    max_bm25f: np.ndarray  # float32, per term: its largest impact (the best any entry scores on it)
    order: np.ndarray  # int32 term ids in the terms' string order (prefix search)
    blocks: np.ndarray  # uint32: bit b set when the term occurs in passage block b of the doc
    saturation: np.ndarray  # float32, per posting: bm25f is the term's ranking idf times this
    reference: ReferenceStats


def analyze_fields(document: Document, config: AnalyzerConfig) -> tuple[list[list[str]], ...]:
    """The terms of each field of FIELDS, per sentence for summary and body (one list otherwise);
    the id also as one exact term (matched exactly); aliases like tags (exact key and words)."""
    id_terms = analyze_text(document.id, config)
    exact_id = normalize_key(document.id)
    if exact_id not in id_terms:
        id_terms.insert(0, exact_id)
    return (
        [id_terms],
        [analyze_text(document.title, config)],
        [analyze_tags(document.tags, config)],
        [analyze_text(sentence, config) for sentence in split_sentences(document.summary)],
        [analyze_text(sentence, config) for sentence in split_sentences(document.body)],
        [analyze_tags(document.aliases, config)],
    )


def bm25_idf(doc_freq: np.ndarray, count: int) -> np.ndarray:
    """Robertson-Sparck Jones idf with +1 inside the log (always positive, as in Lucene). `count` may be
    a lineage's reference count, below a term's document frequency: such a term counts as in every document."""
    return np.log1p((np.maximum(count - doc_freq, 0) + 0.5) / (doc_freq + 0.5)).astype(np.float32)


def ranking_idf(doc_freq: np.ndarray, count: int, floor: float | None) -> np.ndarray:
    """The idf impacts are computed with: Robertson-Sparck Jones without the +1, floored (BM25FParams)."""
    if floor is None:
        return bm25_idf(doc_freq, count)
    return np.maximum(np.log((np.maximum(count - doc_freq, 0) + 0.5) / (doc_freq + 0.5)), floor).astype(np.float32)


@dataclass(frozen=True)
class Occurrences:
    """Every term occurrence in (doc, field) order: term id, and its sentence (-1 in context fields).

    Term ids only need to be dense and consistent within one collection (the vocabulary renumbers
    them); `hashes`, when given, are hash_term of each term (so the vocabulary does not hash again).
    """

    terms: Sequence[str]
    term_ids: np.ndarray  # int64 or int32
    sentences: np.ndarray  # int64 or int32
    lengths: np.ndarray  # int64 (docs, fields): occurrences per field
    sentence_counts: np.ndarray  # int64 per doc
    hashes: np.ndarray | None = None  # uint64 per term


Analyze = Callable[[Document, AnalyzerConfig], tuple[list[list[str]], ...]]
# A whole collection's occurrences at once (incremental builds keep them per document: render.release).
Collect = Callable[[Sequence[Document], AnalyzerConfig], Occurrences]


def collect_terms(
    documents: Sequence[Document],
    config: AnalyzerConfig,
    progress: Callable[[int], None] | None,
    analyze: Analyze,
) -> Occurrences:
    term_ids: dict[str, int] = {}
    occurrences: list[int] = []
    sentences: list[int] = []
    lengths = np.zeros((len(documents), len(FIELDS)), dtype=np.int64)
    sentence_counts = np.zeros(len(documents), dtype=np.int64)
    for position, document in enumerate(documents):
        sentence = 0
        for field_index, parts in enumerate(analyze(document, config)):
            context = FIELDS[field_index] in CONTEXT_FIELDS
            for terms in parts:
                lengths[position, field_index] += len(terms)
                occurrences.extend(term_ids.setdefault(t, len(term_ids)) for t in terms)
                sentences.extend([-1 if context else sentence] * len(terms))
                sentence += not context
        sentence_counts[position] = sentence
        if progress is not None and position % 1000 == 999:
            progress(position + 1)
    return Occurrences(
        terms=list(term_ids),
        term_ids=np.array(occurrences, dtype=np.int64),
        sentences=np.array(sentences, dtype=np.int64),
        lengths=lengths,
        sentence_counts=sentence_counts,
    )


def _block_bits(sentences: np.ndarray, sentence_counts: np.ndarray) -> np.ndarray:
    """Each occurrence's passage-block bit: sentence i of n lies in block i * BLOCKS // max(n, BLOCKS)."""
    block = sentences * BLOCKS // np.maximum(sentence_counts, BLOCKS)
    bits = np.left_shift(np.uint64(1), np.maximum(block, 0).astype(np.uint64)).astype(np.uint32)
    return np.where(sentences < 0, ALL_BLOCKS, bits)


def term_max_impacts(offsets: np.ndarray, impacts: np.ndarray) -> np.ndarray:
    """Each term's largest impact (every term has at least one posting; none for no terms)."""
    if len(offsets) < 2:
        return np.zeros(0, dtype=np.float32)
    return np.maximum.reduceat(impacts, offsets[:-1]).astype(np.float32)


def term_slots(offsets: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """The posting slots of `terms` (sorted ids), in order: offsets[t]:offsets[t + 1] for each."""
    starts, stops = offsets[terms], offsets[terms + 1]
    lengths = stops - starts
    before = np.zeros(len(terms), dtype=np.int64)
    np.cumsum(lengths[:-1], out=before[1:])
    return np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


def _string_order(terms: Sequence[str]) -> np.ndarray:
    """The term ids in the terms' string order (code points, as Python compares them). NumPy sorts its
    fixed-width strings the same way unless a term holds NUL, which NumPy would strip: then Python sorts."""
    if terms and not any("\x00" in term for term in terms):
        return np.argsort(np.array(terms, dtype=str), kind="stable").astype(np.int64)
    return np.array(sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int64)


@dataclass(frozen=True)
class PostingRows:
    """One row per (term, doc), sorted by term then doc: what a posting's impacts are made of. Each row
    depends only on its document and the reference statistics, so an index can be patched a row at a time."""

    terms: np.ndarray  # int32 or int64 term ids, in the caller's numbering
    docs: np.ndarray  # int32 or int64 positions
    saturation: np.ndarray  # float32: the saturated BM25F weighted tf, to be multiplied by the term's idf
    seed: np.ndarray  # uint8
    blocks: np.ndarray  # uint32


# Term occurrences per run of posting_rows. A run's sort and grouping arrays cost about 90 bytes per
# occurrence, so rows are made a run of documents at a time (about 25 MB) and merged, instead of
# sorting every occurrence at once (1.1 GB at 100,000 entries).
RUN_OCCURRENCES = 1 << 18
_ROW_COLUMNS = (("docs", np.int32), ("saturation", np.float32), ("seed", np.uint8), ("blocks", np.uint32))


def posting_rows(
    taken: list[Occurrences], term_ids: np.ndarray, reference: ReferenceStats, params: BM25FParams
) -> PostingRows:
    """The rows of the occurrences in `taken` (which it empties, so they can be freed early), terms
    numbered by `term_ids[their term id]`, normalised against `reference`.

    Each run of documents' rows come out sorted by (term, doc) with every doc above the previous run's,
    so a stable placement by term alone (a counting sort) merges the runs in (term, doc) order. The
    runs are made from the last documents to the first, and the occurrences' term ids and sentences
    are cut to the documents still to do after each (in place: their memory goes back as the rows
    grow, so the two are never both held whole; the occurrences are spent)."""
    found = taken.pop()
    runs = []
    for docs, occurrences in reversed(_runs(found.lengths)):
        runs.append(_run_rows(found, term_ids, docs, occurrences, reference, params))
        _cut(found.term_ids, occurrences.start)
        _cut(found.sentences, occurrences.start)
    del found
    runs.reverse()
    return _merged_runs(runs, len(term_ids))


def _cut(array: np.ndarray, size: int) -> None:
    """Shrink a one-dimensional array that owns its memory to its first `size` items, in place (the
    allocator takes the rest back); an array that is a view of another is left whole."""
    if array.ndim == 1 and array.flags.owndata and array.base is None:
        array.resize(size, refcheck=False)


def _runs(lengths: np.ndarray) -> list[tuple[slice, slice]]:
    """Consecutive documents of about RUN_OCCURRENCES occurrences together (at least one document
    each), as (documents, their occurrences); `lengths`: the (docs, fields) occurrence counts."""
    ends = np.cumsum(lengths.sum(axis=1))
    bounds = [0]
    while bounds[-1] < len(ends):
        at = bounds[-1]
        reach = (int(ends[at - 1]) if at else 0) + RUN_OCCURRENCES
        bounds.append(max(int(np.searchsorted(ends, reach, side="right")), at + 1))
    starts = [0, *ends.tolist()]
    return [(slice(first, last), slice(starts[first], starts[last])) for first, last in itertools.pairwise(bounds)]


def _run_rows(
    found: Occurrences,
    term_ids: np.ndarray,
    documents: slice,
    occurrences: slice,
    reference: ReferenceStats,
    params: BM25FParams,
) -> dict[str, np.ndarray]:
    """The rows of some consecutive documents (`found`'s terms numbered by `term_ids`), sorted by
    (term, doc); each row's values are those of its document alone."""
    lengths = found.lengths[documents]
    count, n_fields = len(lengths), len(FIELDS)
    doc_of = np.repeat(np.arange(count, dtype=np.int64), lengths.sum(axis=1))
    bits = _block_bits(found.sentences[occurrences], found.sentence_counts[documents][doc_of])
    keys = term_ids[found.term_ids[occurrences]].astype(np.int64, copy=False)
    keys *= count
    keys += doc_of
    del doc_of
    keys *= n_fields
    keys += np.repeat(np.tile(np.arange(n_fields, dtype=np.int64), count), lengths.ravel())
    # One sort gives tf per (term, doc, field); a second grouping gives one posting per (term, doc).
    unique_keys, key_of, tf = np.unique(keys, return_inverse=True, return_counts=True)
    del keys
    field_idx = unique_keys % n_fields
    pair = unique_keys // n_fields
    pair_keys, posting_of = np.unique(pair, return_inverse=True)

    average = np.array(reference.field_lengths)
    b = np.array(params.b)[field_idx]
    norm = 1.0 - b + b * lengths[pair % count, field_idx] / average[field_idx]
    # bincount adds in index order, as np.add.at did: the same float64 sums, bit for bit.
    weighted_tf = np.bincount(posting_of, np.array(params.weights)[field_idx] * tf / norm, len(pair_keys))
    saturation = weighted_tf * (params.k1 + 1.0) / (params.k1 + weighted_tf)
    seed_weight = np.where(field_idx == FIELDS.index("body"), np.minimum(tf, SEED_BODY_CAP), SEED_WEIGHTS[field_idx])
    seed = np.bincount(posting_of, seed_weight, len(pair_keys))  # small integers: exact in float64

    blocks = np.zeros(len(pair_keys), dtype=np.uint32)
    np.bitwise_or.at(blocks, posting_of[key_of], bits)
    return {
        "terms": (pair_keys // count).astype(np.int32),
        "docs": (pair_keys % count + documents.start).astype(np.int32),
        "saturation": saturation.astype(np.float32),
        "seed": seed.astype(np.uint8),
        "blocks": blocks,
    }


def _merged_runs(runs: list[dict[str, np.ndarray]], term_count: int) -> PostingRows:
    """The runs' rows as one set sorted by (term, doc): each run's rows go to their term's next free
    places, one column at a time, each run's column freed once placed (the runs and the result are
    never both held whole)."""
    doc_freq = np.zeros(term_count, dtype=np.int64)
    for run in runs:
        doc_freq += np.bincount(run["terms"], minlength=term_count)
    total = int(doc_freq.sum())
    place_type = np.int32 if total < 2**31 else np.int64
    cursor = np.cumsum(doc_freq) - doc_freq
    for run in runs:  # a row's place: its term's cursor plus its rank among the run's rows of that term
        terms = run.pop("terms")
        counts = np.bincount(terms, minlength=term_count)
        run_start = np.cumsum(counts) - counts
        run["places"] = (cursor[terms] + (np.arange(len(terms)) - run_start[terms])).astype(place_type)
        cursor += counts
    columns: dict[str, np.ndarray] = {}
    for name, dtype in _ROW_COLUMNS:
        column = columns[name] = np.empty(total, dtype=dtype)
        for run in runs:
            column[run["places"]] = run.pop(name)
    return PostingRows(terms=np.repeat(np.arange(term_count, dtype=np.int32), doc_freq), **columns)


def assemble_postings(
    vocabulary: Vocabulary,
    order: np.ndarray,
    rows: PostingRows,
    reference: ReferenceStats,
    params: BM25FParams,
    *,
    doc_freq: np.ndarray | None = None,
    impacts: np.ndarray | None = None,
) -> Postings:
    """Postings from rows numbered by `vocabulary`'s term ids: idf and impacts from each term's document
    frequency and the reference count (`order`: the term ids in string order). `doc_freq`: each term's
    row count (int64) when the caller knows it, so `rows.terms` is not read; `impacts`: the impacts
    when the caller made them (a patch: the values this would make)."""
    if doc_freq is None:
        doc_freq = np.bincount(rows.terms, minlength=len(vocabulary))
    offsets = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(doc_freq, out=offsets[1:])
    if impacts is None:
        impacts = np.repeat(ranking_idf(doc_freq, reference.documents, params.idf_floor), doc_freq)
        impacts *= rows.saturation  # in place: one array of one value per posting, not two
    return Postings(
        vocabulary=vocabulary,
        offsets=offsets,
        docs=rows.docs.astype(np.int32, copy=False),
        bm25f=impacts,
        seed=rows.seed,
        idf=bm25_idf(doc_freq, reference.documents),
        max_bm25f=term_max_impacts(offsets, impacts),
        order=order.astype(np.int32),
        blocks=rows.blocks,
        saturation=rows.saturation,
        reference=reference,
    )


def build_postings(
    documents: Sequence[Document],
    *,
    config: AnalyzerConfig,
    params: BM25FParams,
    progress: Callable[[int], None] | None = None,
    analyze: Analyze = analyze_fields,
    collect: Collect | None = None,
    reference: ReferenceStats | None = None,
) -> tuple[Postings, np.ndarray]:
    """Postings for `documents` and the per-(doc, field) term counts (document lengths).

    `reference`: the lineage's statistics to normalise against (ReferenceStats.kept_for decides
    whether they still hold); without it, the collection's own.

    `analyze` turns one document into its fields' terms; a caller may pass a memoizing one
    (incremental builds), which must return what analyze_fields would. `collect`, when given,
    replaces the whole collection step and must give the occurrences analyze_fields would.
    """
    found = collect(documents, config) if collect is not None else collect_terms(documents, config, progress, analyze)
    terms, lengths = found.terms, found.lengths
    vocabulary, new_id = Vocabulary.build(terms, hashes=found.hashes)
    measured = ReferenceStats.measured(lengths)
    reference = measured if reference is None else reference.kept_for(measured)
    taken = [found]
    del found
    rows = posting_rows(taken, new_id, reference, params)
    order = new_id[_string_order(terms)]
    # Each term's row count, and the rows' term ids let go before the impacts are made (the peak of a full
    # build at 100,000 entries, 7.9 million postings): found in the sorted ids, as np.bincount made a
    # 64-bit copy of them (63 MB) to count.
    bounds = np.searchsorted(rows.terms, np.arange(len(vocabulary) + 1, dtype=rows.terms.dtype))
    doc_freq = np.diff(bounds).astype(np.int64)
    rows = replace(rows, terms=np.empty(0, dtype=rows.terms.dtype))
    return assemble_postings(vocabulary, order, rows, reference, params, doc_freq=doc_freq), lengths

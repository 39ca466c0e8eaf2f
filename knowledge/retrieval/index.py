"""The compiled search index of one release: compile once, serialize safely, search many times."""

from __future__ import annotations

import math
import mmap
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any

import numpy as np

from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.container import (
    ContainerError,
    array_padding,
    arrays_header,
    pack_arrays,
    pack_pieces,
    unpack_arrays,
)
from knowledge.retrieval.documents import Document, document_key
from knowledge.retrieval.feedback import FEEDBACK_ENTRIES, FORWARD_ARRAYS, ForwardIndex, expanded_plan
from knowledge.retrieval.hits import Accumulators, QueryHits, term_min_tokens, term_min_tokens_carried
from knowledge.retrieval.index_format import (
    IMPACTS,
    ROWS,
    searched_arrays,
    served_arrays,
    served_forward,
    served_lazily,
    stored_arrays,
    written_arrays,
)
from knowledge.retrieval.patching import Carried, PreviousIndex, patched_postings
from knowledge.retrieval.planning import QueryPlanner
from knowledge.retrieval.postings import (
    Analyze,
    BM25FParams,
    Collect,
    Postings,
    ReferenceStats,
    analyze_fields,
    bm25_idf,
    build_postings,
    term_max_impacts,
)
from knowledge.retrieval.ranking import ArrayHits, Hit, MatchFacts, Prefix, Ranking, SearchOptions
from knowledge.retrieval.relevance import BATCH, PackFloor, Verdict
from knowledge.retrieval.scoring import (
    Coverage,
    QueryPlan,
    coverage_many,
    coverage_of,
    expand_links,
    holds_rarest,
    numbers_lacking,
)
from knowledge.retrieval.synonyms import SynonymSet, rules_from_meta, rules_to_meta, synonym_rules
from knowledge.retrieval.vocabulary import SortedTerms, Vocabulary, pack_strings, unpack_string

__all__ = ["Hit", "Ranking", "SearchIndex", "SearchOptions"]

# 2 stores lengths where 1 stored offsets, 3 no impacts, 4 postings as rows (index_format); all load
FORMAT_VERSION = 4
FORMATS = frozenset({1, 2, 3, FORMAT_VERSION})
SERVED_SLICE = 1024 * 1024  # a stored index copied as a host's copy this much at a time
BROWSE_SCORE = 0.5  # seed §4: an empty topic scores every entry 0.5
FALLBACK_SIZE = 3  # seed §4: "按 confidence 给几条兜底" — the reference gives three
WEAK_SIZE = 3  # hits that do not cover the topic: at most this many of the best, still matched=false
# Minimum Ranking.match_score for `matched` of an index compiled without a threshold. Every release
# stores its own (calibrated automatically at build time, or the namespace's), so this only serves
# indexes compiled directly (tests, benchmarks) and releases built before calibration existed.
DEFAULT_MATCH_THRESHOLD = 0.84
LEAD_WEIGHT = 0.5
LEAD_CAP = 3.0
# Words no entry contains already count as uncovered; their share of the topic's informative weight
# also lowers the match score by this much: a topic built on words the knowledge base never uses
# is about something else (a place, a product, another library), whatever else it shares with it.
UNKNOWN_PENALTY = 0.5
# Added to the match score when the best entry contains the topic's most informative known word: a
# question is usually about its rarest word, and an entry that lacks it answers something else
# (chosen by leave-one-collection-out, docs/retrieval.md "Decision features").
RAREST_BONUS = 0.1
# Subtracted from the match score, times the share of the topic's numbers (terms with a digit: `16`,
# `84m`, `2010`, `3.12`) the best entry lacks. Numbers are common words to idf, so coverage hardly
# notices one missing, yet a number names what a question is about: line 16 is not line 17, 84M not 82
# (issue 11, docs/retrieval.md "Numbers the best entry lacks").
NUMBER_PENALTY = 0.3
# Whole-entry coverage enters the gate score as a penalty, not a cliff: each point of the topic's
# informative (idf-weighted) weight the best entry lacks below COVERAGE_KNEE costs COVERAGE_SLOPE
# points of score. A fixed floor flipped a clearly covered question whenever an unrelated publish
# moved its coverage across it (eg-q-064: 0.3507 -> 0.3466 against 0.35); the penalty moves it
# by at most COVERAGE_SLOPE x the change (docs/retrieval.md, "The coverage penalty").
COVERAGE_KNEE = 0.38
COVERAGE_SLOPE = 8.0
# Issue 11: a topic whose informative terms mostly do not occur in the best entry is never matched.
# Below this coverage the penalty already puts the gate score under 0 (every threshold is >= 0)
# whatever the rest of the score, so refusing it outright (-inf) changes no decision: the rule holds
# for any threshold without a cliff where it could matter. ~0.266.
MATCH_COVERAGE_FLOOR = (COVERAGE_SLOPE * COVERAGE_KNEE - (LEAD_WEIGHT * math.log(LEAD_CAP) + RAREST_BONUS)) / (
    1 + COVERAGE_SLOPE
)
EXPANSION_SEEDS = 3  # neighbours of this many top hits may join
EXPANSION_FACTOR = 0.5  # ...at this share of the score of the hit that links to them


def coverage_penalty(entry_coverage: float) -> float:
    """What the best entry's missing coverage costs the gate score (0 from COVERAGE_KNEE up)."""
    return COVERAGE_SLOPE * max(0.0, COVERAGE_KNEE - entry_coverage)


def gate_score_of(match_score: float, coverage: Coverage) -> float:
    """The score `matched` compares with the threshold: the match score less the coverage penalty,
    -inf below MATCH_COVERAGE_FLOOR (never matched; the penalty alone already refuses it there)."""
    if coverage.entry < MATCH_COVERAGE_FLOOR:
        return -math.inf
    return match_score - coverage_penalty(coverage.entry)


def confidence_factor(confidence: np.ndarray) -> np.ndarray:
    """Seed §4: scores are multiplied by 0.85 + confidence × 0.15."""
    return 0.85 + confidence * 0.15


class SearchIndex:
    """Postings plus per-document facts (confidence, tokens, category, links); no document text."""

    def __init__(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self._mapping: mmap.mmap | None = None  # the file its arrays are views of, if mapped (from_bytes)
        try:
            self._meta = meta
            arrays = self._arrays = searched_arrays(meta, arrays)
            # Indexes compiled before code-aware analysis cut words at punctuation (and before dotted
            # names, did not keep their names whole).
            self.analyzer = AnalyzerConfig.from_meta(meta["analyzer"])
            self.options = SearchOptions(**meta["options"])
            self.categories: list[str] = list(meta["categories"])
            self.vocabulary = Vocabulary(arrays["term_hashes"], arrays["term_blob"], arrays["term_offsets"])
            self.count = int(meta["count"])
            # Indexes compiled before reference statistics normalised against their own collection.
            self.reference = ReferenceStats.from_meta(meta.get("reference"))
            self._idf_count = self.reference.documents if self.reference is not None else self.count
            self._offsets = arrays["post_offsets"]
            self._docs = arrays["post_docs"]
            self._impacts = {"bm25f": arrays["post_bm25f"], "seed": arrays["post_seed"]}
            # Optional: indexes compiled before passage blocks measure coverage on the whole entry.
            self._blocks: np.ndarray | None = arrays.get("post_blocks")
            self._idf = arrays["term_idf"]
            self._confidence = arrays["doc_confidence"]
            self._factor = confidence_factor(self._confidence)
            self._tokens = arrays["doc_tokens"]
            self._category = arrays["doc_category"]
        except (KeyError, TypeError) as error:
            raise ContainerError(f"incomplete index: {error}") from error
        self._accumulators = Accumulators()
        self._browse_cache: dict[int, np.ndarray] = {}
        self._fallback_cache: dict[int, np.ndarray] = {}
        self.synonyms = rules_from_meta(meta.get("synonyms", ()))
        self._planner = QueryPlanner(
            vocabulary=self.vocabulary,
            idf=self._idf,
            analyzer=self.analyzer,
            max_idf=float(bm25_idf(np.array([0.0]), self._idf_count)[0]),
            synonyms=self.synonyms,
            # Without tags or aliases, exact-key lookups (a few per query word) would be wasted work.
            has_tags=bool(meta.get("has_tags", True)),
            sorted_terms=SortedTerms(self.vocabulary, arrays["term_order"]) if "term_order" in arrays else None,
        )

    # -- building and serialization -------------------------------------------------------

    @classmethod
    def compile(
        cls,
        documents: Sequence[Document],
        *,
        options: SearchOptions | None = None,
        analyzer: AnalyzerConfig | None = None,
        params: BM25FParams | None = None,
        progress: Callable[[int], None] | None = None,
        analyze: Analyze = analyze_fields,
        synonyms: Iterable[SynonymSet] = (),
        collect: Collect | None = None,
        reference: ReferenceStats | None = None,
        previous: SearchIndex | None = None,
        patchable: bool = False,
        document_keys: Sequence[bytes] | None = None,
    ) -> SearchIndex:
        """Index `documents` (sorted by ID: position i is documents[i]); see build_postings for `analyze`,
        `collect` and `reference` (the statistics the index records it was normalised against).

        `patchable` records each document's key, so the next compile can patch this index: given as
        `previous`, with `reference` its own statistics, the index is made from it and the changed
        documents alone (knowledge.retrieval.patching), with the same bytes as a full compile.
        `document_keys`: each document's document_key, when the caller kept them from an earlier build.
        """
        analyzer = analyzer or AnalyzerConfig()
        params = params or BM25FParams()
        keys = np.zeros((0, 16), dtype=np.uint8)
        if patchable or previous is not None:
            made = document_keys if document_keys is not None else [document_key(d) for d in documents]
            keys = np.frombuffer(b"".join(made), dtype=np.uint8).reshape(-1, 16)
        patched = None
        if previous is not None and previous._patches(analyzer, params, reference):
            base = PreviousIndex.of(previous._arrays, previous.reference, release=previous.pages_let_go)
            if base is not None:
                patched = patched_postings(base, documents, keys, config=analyzer, params=params, analyze=analyze)
                del base
                previous.pages_let_go()  # read whole by the patch, and not again here
        carried = None
        if patched is not None:
            postings, lengths, carried = patched
        else:
            postings, lengths = build_postings(
                documents,
                config=analyzer,
                params=params,
                progress=progress,
                analyze=analyze,
                collect=collect,
                reference=reference,
            )
        categories = sorted({d.category for d in documents})
        code = {c: i for i, c in enumerate(categories)}
        # A list per linking document only: one per document (100,000 mostly empty lists) was a tenth of
        # a one-entry build's compile at 100,000 entries, and more for the collector (issue 18 §3).
        position_of = {d.id: i for i, d in enumerate(documents)} if any(d.links for d in documents) else {}
        link_counts, link_positions = [0] * len(documents), []
        for number, d in enumerate(documents):
            if d.links:
                found = [position_of[link] for link in d.links if link in position_of and link != d.id]
                link_counts[number] = len(found)
                link_positions += found
        link_offsets = np.zeros(len(documents) + 1, dtype=np.int64)
        np.cumsum(link_counts, out=link_offsets[1:])
        id_blob, id_offsets = pack_strings([d.id for d in documents])
        doc_tokens = np.array([d.tokens for d in documents], dtype=np.int32)
        meta = {
            "format": FORMAT_VERSION,
            "count": len(documents),
            "categories": categories,
            "analyzer": asdict(analyzer),
            "params": params.to_meta(),
            "reference": postings.reference.to_meta(),
            "options": asdict(options or SearchOptions()),
            "has_tags": any(d.tags or d.aliases for d in documents),
            "synonyms": rules_to_meta(synonym_rules(synonyms, analyzer)),
            # How the match threshold in "options" was obtained (a release build fills it in).
            "matching": {},
        }
        arrays = {
            "term_hashes": postings.vocabulary.hashes,
            "term_blob": postings.vocabulary.blob,
            "term_offsets": postings.vocabulary.offsets,
            "term_idf": postings.idf,
            "term_max_bm25f": postings.max_bm25f,
            "term_order": postings.order,
            "post_offsets": postings.offsets,
            "post_docs": postings.docs,
            "post_bm25f": postings.bm25f,
            "post_seed": postings.seed,
            "post_blocks": postings.blocks,
            "post_saturation": postings.saturation,
            "doc_lengths": lengths.astype(np.int32),
            "doc_confidence": np.array([d.confidence for d in documents], dtype=np.float64),
            "doc_tokens": doc_tokens,
            "term_min_tokens": _min_tokens(postings, doc_tokens, carried),
            "doc_category": np.array([code[d.category] for d in documents], dtype=np.int16),
            "doc_id_blob": id_blob,
            "doc_id_offsets": id_offsets,
            "link_offsets": link_offsets,
            "link_targets": np.array(link_positions, dtype=np.int32),
        }
        if patchable:
            arrays["doc_keys"] = keys
        return cls(meta, arrays)

    def _patches(self, analyzer: AnalyzerConfig, params: BM25FParams, reference: ReferenceStats | None) -> bool:
        """Whether a compile with these settings may patch this index (see compile)."""
        return (
            self.reference is not None
            and reference == self.reference
            and self.analyzer == analyzer
            and self.params == params
            and "doc_keys" in self._arrays
        )

    def to_bytes(self) -> bytes:
        """Safe (no pickle) and deterministic: the same documents give byte-identical output."""
        return pack_arrays(self._meta, self._stored())

    def to_pieces(self) -> Iterator[bytes | memoryview]:
        """to_bytes a piece at a time (views of the arrays): for writing the index without copying it."""
        if self._meta.get("format") == 1:
            return pack_pieces(self._meta, self._arrays)
        return pack_pieces(self._meta, written_arrays(self._arrays, self._meta))

    def _stored(self) -> dict[str, np.ndarray]:
        """The arrays the index's format writes (format 1: those it searches with)."""
        return stored_arrays(self._arrays, self._meta) if self._meta.get("format") != 1 else self._arrays

    def served_pieces(self) -> Iterator[bytes | memoryview]:
        """to_pieces of the copy a host's web workers map: with the impacts format 3 does not store, so no
        worker derives them (index_format.served_arrays); the stored bytes for older formats."""
        if self._meta.get("format") == 1:
            return self.to_pieces()
        arrays = self._arrays
        if "_forward" in self.__dict__:  # transposed already (it searched with feedback, or was prepared)
            arrays = {**arrays, **self._forward.arrays()}
        return pack_pieces(self._meta, served_arrays(self._meta, arrays))

    @classmethod
    def from_bytes(cls, data: bytes | mmap.mmap) -> SearchIndex:
        meta, arrays = unpack_arrays(data)
        if meta.get("format") not in FORMATS:
            raise ContainerError(f"index format {meta.get('format')!r} is not one of {sorted(FORMATS)}")
        if isinstance(data, mmap.mmap) and ROWS in arrays:
            # A mapped format 4 index (a build's spooled copy): the mapping's pages let go as its rows
            # are taken apart, so the rows are never resident whole beside the columns made of them.
            arrays = searched_arrays(meta, arrays, release=partial(data.madvise, mmap.MADV_DONTNEED))
        index = cls(meta, arrays)
        if isinstance(data, mmap.mmap):
            index._mapping = data
        return index

    def pages_let_go(self) -> None:
        """Drop this process's resident pages of the file the index is mapped from (none when it is not
        mapped): the page cache keeps them, and a later read faults them back in. Reading a whole index
        (a patch reads every column) leaves all of them resident in the reader, over 100 MiB at 100,000
        entries."""
        if self._mapping is not None:
            self._mapping.madvise(mmap.MADV_DONTNEED)

    def __len__(self) -> int:
        return self.count

    @classmethod
    def serve_file(cls, path: Path) -> None:
        """Make the index file at `path` (a stored index's bytes) the copy a host's workers map
        (served_write), rewritten in place; left as it is when it is that copy already."""
        with open(path, "rb") as file:
            data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)  # unmapped with the arrays' last view
        if not _served_differs(*unpack_arrays(data)):
            return
        served = path.with_name(f"{path.name}.served")
        try:
            cls.served_write(data, served)
            os.replace(served, path)
        finally:
            served.unlink(missing_ok=True)

    @classmethod
    def served_write(cls, data: bytes | mmap.mmap, path: Path) -> None:
        """Write to `path` the copy of the stored index `data` that a host's workers map (served_pieces):
        with the impacts and columns of postings its format derives, and the forward index when it ranks
        with feedback; `data` as it is when it holds them already or is of a format this code does not
        know. A build writes it from the index it spooled, once, where it wrote the stored bytes and
        then rewrote them (serve_file)."""
        meta, arrays = unpack_arrays(data)
        release = partial(data.madvise, mmap.MADV_DONTNEED) if isinstance(data, mmap.mmap) else _nothing
        with open(path, "wb") as out:
            if not _served_differs(meta, arrays):
                view = memoryview(data)
                for start in range(0, len(view), SERVED_SLICE):
                    out.write(view[start : start + SERVED_SLICE])
                    release()
                return
            # An array at a time, the mapping's pages let go after each: at 100,000 entries a copy made
            # from the whole index (its derived arrays and every page read) peaked 267 MiB above the process.
            lazily = served_lazily(meta, arrays, release=release)
            specs = {name: (dtype, shape) for name, (dtype, shape, _) in lazily.items()}
            out.write(arrays_header(meta, specs))
            for name in sorted(lazily):
                array = np.ascontiguousarray(lazily[name][2]())
                out.write(array.reshape(-1).view(np.uint8).data)
                out.write(array_padding(array.nbytes))
                del array
                release()

    def public_id(self, position: int) -> str:
        return unpack_string(self._arrays["doc_id_blob"], self._arrays["doc_id_offsets"], position)

    def entry_tokens(self, position: int) -> int:
        """The token cost (seed §4) of the entry at `position`, as compiled: no entry record is read."""
        return int(self._tokens[position])

    # -- searching -------------------------------------------------------------------------

    def search(
        self,
        topic: str,
        *,
        category: str | None = None,
        options: SearchOptions | None = None,
        exclude: np.ndarray | None = None,
    ) -> Ranking:
        """Rank entries for `topic` (seed §4): browse; match; weak hits when the best entry does not
        cover the topic; the confidence fallback when no entry has any of its terms.

        `exclude` (a mask over positions) leaves entries out before ranking, as a category does: the
        entries with path globs when a request sends paths (knowledge.retrieval.path_ranking).
        """
        options = options or self.options
        allowed = self._allowed(category)
        cached = exclude is None or not exclude.any()
        if exclude is not None and not cached:
            allowed = ~exclude if allowed is None else allowed & ~exclude
        if allowed is not None and not allowed.any():
            return self._materialized("browse" if not topic.strip() else "fallback", np.zeros(0, np.int64))
        if not topic.strip():
            return self._browse(category, allowed, cached=cached)
        plan = self.plan(topic, options.ranker)
        hits = self._query_hits(plan, options.ranker, allowed)
        if options.feedback and options.ranker == "bm25f":
            hits = self._with_feedback(plan, hits)
        head = hits.prefix(WEAK_SIZE)
        if not len(head.positions):
            return self._fallback(category, allowed, cached=cached)
        # The best hits' coverage in one pass over the query terms' postings: the first decides
        # `matched`, all of them the pack's relevance floor.
        batch = hits.prefix(BATCH).positions[:BATCH]
        passages, entries = coverage_many(plan, batch, offsets=self._offsets, docs=self._docs, blocks=self._blocks)
        coverage = Coverage(passage=float(passages[0]), entry=float(entries[0]))
        rarest = holds_rarest(plan, int(batch[0]), offsets=self._offsets, docs=self._docs)
        lacking = numbers_lacking(plan, int(batch[0]), offsets=self._offsets, docs=self._docs)
        match_score = self._match_score(coverage, head, plan, rarest=rarest, numbers_lacking=lacking)
        gate_score = gate_score_of(match_score, coverage)
        floor = self._floor(plan, hits, float(head.scores[0]), options)
        if floor is not None:
            floor.remember(batch, passages)
        facts = MatchFacts(match_score, coverage, gate_score, floor)
        if options.ranker == "bm25f" and gate_score < self._threshold(options):
            if floor is not None and floor.best_share:
                # A weak answer's best hit is itself in doubt: its coverage is no yardstick for the others.
                floor = replace(floor, best_share=0.0)
                facts = MatchFacts(match_score, coverage, gate_score, floor)
            return Ranking(mode="weak", matched=False, hits=self._weak(head, floor), facts=facts)
        if options.expand:
            return self._expanded(hits, allowed, facts)
        return Ranking(mode="match", matched=True, hits=hits, facts=facts)

    def _with_feedback(self, plan: QueryPlan, hits: QueryHits) -> QueryHits:
        """Ranked again with the terms the first pass's best entries share (feedback.py), continuing
        the first pass's sums; coverage, `matched` and the pack floors still measure the topic's own `plan`."""
        first = hits.prefix(FEEDBACK_ENTRIES)
        expanded = expanded_plan(plan, first.positions, first.scores, self._forward)
        if expanded is plan:
            return hits
        return hits.extended(expanded)

    def prepared(self) -> SearchIndex:
        """This index with what its searches would otherwise make on first use made now: a release's
        loader calls it off the request path (the forward index of a release ranking with feedback
        takes seconds and 8 bytes per posting at 100,000 entries)."""
        if self.options.feedback:
            _ = self._forward
        return self

    @cached_property
    def _forward(self) -> ForwardIndex:
        """Mapped from a host's file that holds it (index_format.served_forward), else transposed once per
        index (feedback is on only for crowded releases): 8 bytes per posting. A served release's is made as
        it loads (prepared); a search makes it only for other indexes."""
        if all(name in self._arrays for name in FORWARD_ARRAYS):
            impacts, offsets, terms = (self._arrays[name] for name in FORWARD_ARRAYS)
            return ForwardIndex.of(
                offsets=offsets, terms=terms, impacts=impacts, post_offsets=self._offsets, count=self.count
            )
        return ForwardIndex.transposed(
            offsets=self._offsets, docs=self._docs, impacts=self._impacts["bm25f"], count=self.count
        )

    def _weak(self, head: Prefix, floor: PackFloor | None) -> ArrayHits:
        """The best WEAK_SIZE hits, less those below the relevance floors: the weak hit set is
        exactly what is packed and counted (hitCount), never filler."""
        keep = [
            index
            for index in range(min(WEAK_SIZE, len(head.positions)))
            if floor is None
            or floor.verdict(Hit(int(head.positions[index]), float(head.scores[index])), first=index == 0)
            is Verdict.KEEP
        ]
        return ArrayHits(head.positions[keep], head.scores[keep], self._tokens, ordered=True)

    def term_idf(self, term: str) -> float:
        """The idf of an analysed term; a term no entry contains gets the largest possible idf."""
        term_id = self.vocabulary.lookup(term)
        if term_id < 0:
            return float(bm25_idf(np.array([0.0]), self._idf_count)[0])
        return float(self._idf[term_id])

    def term_impacts(self, plan: QueryPlan, positions: np.ndarray) -> np.ndarray:
        """(plan terms x positions): each term's impact in each entry (0 where absent), for explanations."""
        impacts = self._impacts[self.options.ranker]
        found_impacts = np.zeros((len(plan.term_ids), len(positions)), dtype=np.float64)
        for row, term_id in enumerate(plan.term_ids):
            start, end = int(self._offsets[term_id]), int(self._offsets[term_id + 1])
            slots = start + np.searchsorted(self._docs[start:end], positions)
            found = slots < end
            found[found] = self._docs[slots[found]] == positions[found]
            found_impacts[row, found] = impacts[slots[found]]
        return found_impacts

    def confidence_factor_of(self, position: int) -> float:
        return float(self._factor[position])

    def coverage_at(self, plan: QueryPlan, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(best passage, whole entry) coverage of the topic for each position."""
        return coverage_many(plan, positions, offsets=self._offsets, docs=self._docs, blocks=self._blocks)

    def plan(self, topic: str, ranker: str = "bm25f") -> QueryPlan:
        """The topic's terms, weights and coverage weights against this index."""
        return self._planner.plan(topic, ranker)

    def _floor(self, plan: QueryPlan, hits: QueryHits, top_score: float, options: SearchOptions) -> PackFloor | None:
        if options.packing == "seed":
            return None
        return PackFloor(
            plan=plan,
            top_score=top_score,
            offsets=self._offsets,
            docs=self._docs,
            blocks=self._blocks,
            ranked=lambda count: hits.prefix(count).positions[:count],
            best_share=options.pack_best_share,
        )

    def _query_hits(self, plan: QueryPlan, ranker: str, allowed: np.ndarray | None) -> QueryHits:
        return QueryHits(
            plan,
            offsets=self._offsets,
            docs=self._docs,
            impacts=self._impacts[ranker],
            min_tokens=self._term_min_tokens,
            factor=self._factor,
            tokens=self._tokens,
            allowed=allowed,
            accumulators=self._accumulators,
        )

    @cached_property
    def _term_min_tokens(self) -> np.ndarray:
        """Stored at compile time; derived once (a pass over all postings) for older indexes."""
        stored = self._arrays.get("term_min_tokens")
        if stored is not None:
            return stored
        return term_min_tokens(offsets=self._offsets, docs=self._docs, tokens=self._tokens)

    @cached_property
    def term_max_impacts(self) -> np.ndarray:
        """Each term's best BM25F impact: stored at compile time, derived for older indexes."""
        stored = self._arrays.get("term_max_bm25f")
        return stored if stored is not None else term_max_impacts(self._offsets, self._impacts["bm25f"])

    def _match_score(
        self, coverage: Coverage, head: Prefix, plan: QueryPlan, *, rarest: bool, numbers_lacking: float = 0.0
    ) -> float:
        """How well the best entry covers the topic: passage coverage + a bonus when it clearly leads
        and one when it holds the topic's most informative known word (`rarest`).

        coverage = the largest share of the query's idf mass that one passage of the best entry
        (a sentence block with the entry's title, tags, aliases and id) contains; unknown terms
        count as uncovered. lead = ln(best / second score), capped. A question about a subject the
        knowledge base lacks shares only generic words with an entry, or meets its own words
        scattered over an entry that mentions the subject in passing; a covered question's words
        meet in one passage of an entry that stands out.
        """
        scores = head.scores
        lead = LEAD_CAP if len(scores) < 2 else min(float(scores[0] / scores[1]), LEAD_CAP)
        total = plan.coverage_total
        unknown = plan.unknown_idf / total if total > 0 else 0.0
        bonus = RAREST_BONUS if rarest else 0.0
        numbers = NUMBER_PENALTY * numbers_lacking
        return coverage.passage + LEAD_WEIGHT * float(np.log(lead)) - UNKNOWN_PENALTY * unknown + bonus - numbers

    def _threshold(self, options: SearchOptions) -> float:
        if options.match_threshold is None:
            return DEFAULT_MATCH_THRESHOLD
        return options.match_threshold

    @property
    def match_threshold(self) -> float:
        """The threshold this index serves with by default."""
        return self._threshold(self.options)

    @property
    def matching(self) -> dict[str, Any]:
        """How the threshold was obtained (empty for an index compiled without a release build)."""
        return dict(self._meta.get("matching") or {})

    def coverage(self, topic: str, position: int) -> Coverage:
        """How much of `topic`'s informative (idf-weighted) terms the entry holds (passage, whole)."""
        plan = self.plan(topic, "bm25f")
        return coverage_of(plan, position, offsets=self._offsets, docs=self._docs, blocks=self._blocks)

    def _allowed(self, category: str | None) -> np.ndarray | None:
        """Category filter applied before ranking; an unknown category allows nothing."""
        if category is None:
            return None
        if category not in self.categories:
            return np.zeros(self.count, dtype=bool)
        return np.asarray(self._category == self.categories.index(category))

    def _browse(self, category: str | None, allowed: np.ndarray | None, *, cached: bool = True) -> Ranking:
        key = -1 if category is None else self.categories.index(category)
        if key not in self._browse_cache or not cached:
            everything = np.arange(self.count, dtype=np.int64)
            positions = everything if allowed is None else everything[allowed]
            if not cached:
                return self._browsed(positions)
            self._browse_cache[key] = positions
        return self._browsed(self._browse_cache[key])

    def _browsed(self, positions: np.ndarray) -> Ranking:
        browse = ArrayHits(positions, np.full(len(positions), BROWSE_SCORE), self._tokens, ordered=True)
        return Ranking(mode="browse", matched=True, hits=browse)

    def _fallback(self, category: str | None, allowed: np.ndarray | None, *, cached: bool = True) -> Ranking:
        """Seed §4: up to three entries by confidence descending (ties by position), not matched."""
        key = -1 if category is None else self.categories.index(category)
        if key not in self._fallback_cache or not cached:
            pool = np.arange(self.count) if allowed is None else np.flatnonzero(allowed)
            order = np.lexsort((pool, -self._confidence[pool]))
            positions = pool[order[:FALLBACK_SIZE]].astype(np.int64)
            if not cached:
                return self._fallen_back(positions)
            self._fallback_cache[key] = positions
        return self._fallen_back(self._fallback_cache[key])

    def _fallen_back(self, positions: np.ndarray) -> Ranking:
        scores = np.asarray(self._confidence[positions], dtype=np.float64)
        return Ranking(mode="fallback", matched=False, hits=ArrayHits(positions, scores, self._tokens, ordered=True))

    def _expanded(self, hits: QueryHits, allowed: np.ndarray | None, facts: MatchFacts) -> Ranking:
        candidates, scores = hits.scored()
        top = hits.prefix(EXPANSION_SEEDS)
        in_hit_set = np.zeros(self.count, dtype=bool)
        in_hit_set[candidates] = True
        positions, extra_scores, parents = expand_links(
            [int(p) for p in top.positions[:EXPANSION_SEEDS]],
            [float(s) for s in top.scores[:EXPANSION_SEEDS]],
            link_offsets=self._arrays["link_offsets"],
            link_targets=self._arrays["link_targets"],
            in_hit_set=in_hit_set,
            allowed=allowed,
            factor=EXPANSION_FACTOR,
        )
        via = np.full(len(candidates) + len(positions), -1, dtype=np.int64)
        via[len(candidates) :] = parents
        expanded = ArrayHits(
            np.concatenate([candidates, np.array(positions, dtype=np.int64)]),
            np.concatenate([scores, np.array(extra_scores, dtype=np.float64)]),
            self._tokens,
            via=via,
        )
        return Ranking(mode="match", matched=True, hits=expanded, public_id=self.public_id, facts=facts)

    def _materialized(self, mode: str, positions: np.ndarray) -> Ranking:
        hits = ArrayHits(positions, np.zeros(len(positions)), self._tokens, ordered=True)
        return Ranking(mode=mode, matched=mode not in ("fallback", "weak"), hits=hits)

    def with_options(self, options: SearchOptions) -> SearchIndex:
        """The same index with other default search options (shares the arrays)."""
        return SearchIndex({**self._meta, "options": asdict(options)}, self._arrays)

    def with_synonyms(self, other: SearchIndex) -> SearchIndex:
        """The same index expanding topics with `other`'s synonym rules."""
        return SearchIndex({**self._meta, "synonyms": other._meta.get("synonyms", [])}, self._arrays)

    @property
    def params(self) -> BM25FParams:
        stored = self._meta.get("params") or {}
        return BM25FParams(
            weights=tuple(stored.get("weights", BM25FParams.weights)),
            b=tuple(stored.get("b", BM25FParams.b)),
            k1=float(stored.get("k1", BM25FParams.k1)),
            # Indexes compiled before the floored idf existed (no key) ranked with Lucene's (None),
            # not with today's default: a release keeps the ranking it was built with.
            idf_floor=stored.get("idf_floor"),
        )

    def with_threshold(
        self, threshold: float, matching: dict[str, Any], *, pack_best_share: float = 0.0, feedback: bool = False
    ) -> SearchIndex:
        """The same index serving with `threshold` (the pack floor relative to the best hit's coverage,
        and feedback on a crowded collection), and a record of how they were obtained."""
        options = replace(self.options, match_threshold=threshold, pack_best_share=pack_best_share, feedback=feedback)
        return SearchIndex({**self._meta, "options": asdict(options), "matching": matching}, self._arrays)


def _min_tokens(postings: Postings, tokens: np.ndarray, carried: Carried | None) -> np.ndarray:
    """Each term's cheapest entry: carried over for the terms an edit in place did not touch."""
    if carried is not None and carried.min_tokens is not None:
        found = term_min_tokens_carried(
            carried.min_tokens,
            renumbered=carried.old_to_final,
            touched=carried.touched,
            offsets=postings.offsets,
            docs=postings.docs,
            tokens=tokens,
        )
    else:
        found = term_min_tokens(offsets=postings.offsets, docs=postings.docs, tokens=tokens)
    return found.astype(np.int32, copy=False)


def _served_differs(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> bool:
    """Whether a host's copy of this stored index differs from it: its format stores no impacts, or
    rows of postings, or it ranks with feedback and holds no forward index (an unknown format: no)."""
    forward = not served_forward(meta) or all(name in arrays for name in FORWARD_ARRAYS)
    return meta.get("format") in FORMATS and not (IMPACTS in arrays and ROWS not in arrays and forward)


def _nothing() -> None:
    return None

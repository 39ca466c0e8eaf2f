"""The compiled search index of one release: compile once, serialize safely, search many times."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cached_property
from typing import Any

import numpy as np

from knowledge.retrieval.analysis import (
    AnalyzerConfig,
    analyze_text,
    exact_tag_candidates,
    is_coverage_term,
    is_han_word,
)
from knowledge.retrieval.container import ContainerError, pack_arrays, unpack_arrays
from knowledge.retrieval.documents import Document
from knowledge.retrieval.hits import Accumulators, QueryHits, term_min_tokens
from knowledge.retrieval.postings import Analyze, BM25FParams, analyze_fields, bm25_idf, build_postings
from knowledge.retrieval.ranking import ArrayHits, Hit, Prefix, Ranking, SearchOptions
from knowledge.retrieval.scoring import (
    QueryPlan,
    coverage_of,
    expand_links,
)
from knowledge.retrieval.stopwords import is_stopword
from knowledge.retrieval.vocabulary import Vocabulary, pack_strings, unpack_string

__all__ = ["Hit", "Ranking", "SearchIndex", "SearchOptions"]

FORMAT_VERSION = 1
BROWSE_SCORE = 0.5  # seed §4: an empty topic scores every entry 0.5
FALLBACK_SIZE = 3  # seed §4: "按 confidence 给几条兜底" — the reference gives three
WEAK_SIZE = 3  # hits that do not cover the topic: at most this many of the best, still matched=false
# Minimum Ranking.match_score (see SearchIndex._match_score) for `matched`, for namespaces that have
# not calibrated their own (Namespace.match_threshold, `manage.py calibrate_threshold`). Calibrated
# on the CMRC 2018 dev split, the only shared one with uncovered questions: the highest value that
# still matches 95 % of covered questions (it refuses 91.7 % of uncovered ones there). Long English
# questions (Cranfield) cover less of their words and calibrate to 0.
DEFAULT_MATCH_THRESHOLD = 0.84
# Coverage weighs each query term by idf ** this. Measured on CMRC dev (docs/retrieval.md): 1 with
# passage coverage refuses more uncovered questions than 2 did with whole-entry coverage.
COVERAGE_EXPONENT = 1.0
LEAD_WEIGHT = 0.5
LEAD_CAP = 3.0
EXPANSION_SEEDS = 3  # neighbours of this many top hits may join
EXPANSION_FACTOR = 0.5  # ...at this share of the score of the hit that links to them


def confidence_factor(confidence: np.ndarray) -> np.ndarray:
    """Seed §4: scores are multiplied by 0.85 + confidence × 0.15."""
    return 0.85 + confidence * 0.15


class SearchIndex:
    """Postings plus per-document facts (confidence, tokens, category, links); no document text."""

    def __init__(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        try:
            self._meta = meta
            self._arrays = arrays
            self.analyzer = AnalyzerConfig(**meta["analyzer"])
            self.options = SearchOptions(**meta["options"])
            self.categories: list[str] = list(meta["categories"])
            self.vocabulary = Vocabulary(arrays["term_hashes"], arrays["term_blob"], arrays["term_offsets"])
            self.count = int(meta["count"])
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
    ) -> SearchIndex:
        """Index `documents` (sorted by ID: position i is documents[i]); see build_postings for `analyze`."""
        analyzer = analyzer or AnalyzerConfig()
        params = params or BM25FParams()
        postings, _ = build_postings(documents, config=analyzer, params=params, progress=progress, analyze=analyze)
        categories = sorted({d.category for d in documents})
        code = {c: i for i, c in enumerate(categories)}
        position_of = {d.id: i for i, d in enumerate(documents)}
        link_lists = [
            [position_of[link] for link in d.links if link in position_of and link != d.id] for d in documents
        ]
        link_offsets = np.zeros(len(documents) + 1, dtype=np.int64)
        np.cumsum([len(links) for links in link_lists], out=link_offsets[1:])
        id_blob, id_offsets = pack_strings([d.id for d in documents])
        doc_tokens = np.array([d.tokens for d in documents], dtype=np.int32)
        meta = {
            "format": FORMAT_VERSION,
            "count": len(documents),
            "categories": categories,
            "analyzer": asdict(analyzer),
            "params": params.to_meta(),
            "options": asdict(options or SearchOptions()),
            # Without tags, exact-tag lookups (a few per query word) would be wasted work.
            "has_tags": any(d.tags for d in documents),
        }
        arrays = {
            "term_hashes": postings.vocabulary.hashes,
            "term_blob": postings.vocabulary.blob,
            "term_offsets": postings.vocabulary.offsets,
            "term_idf": postings.idf,
            "post_offsets": postings.offsets,
            "post_docs": postings.docs,
            "post_bm25f": postings.bm25f,
            "post_seed": postings.seed,
            "post_blocks": postings.blocks,
            "doc_confidence": np.array([d.confidence for d in documents], dtype=np.float64),
            "doc_tokens": doc_tokens,
            "term_min_tokens": term_min_tokens(offsets=postings.offsets, docs=postings.docs, tokens=doc_tokens).astype(
                np.int32
            ),
            "doc_category": np.array([code[d.category] for d in documents], dtype=np.int16),
            "doc_id_blob": id_blob,
            "doc_id_offsets": id_offsets,
            "link_offsets": link_offsets,
            "link_targets": np.array([p for links in link_lists for p in links], dtype=np.int32),
        }
        return cls(meta, arrays)

    def to_bytes(self) -> bytes:
        """Safe (no pickle) and deterministic: the same documents give byte-identical output."""
        return pack_arrays(self._meta, self._arrays)

    @classmethod
    def from_bytes(cls, data: bytes) -> SearchIndex:
        meta, arrays = unpack_arrays(data)
        if meta.get("format") != FORMAT_VERSION:
            raise ContainerError(f"index format {meta.get('format')!r} is not {FORMAT_VERSION}")
        return cls(meta, arrays)

    def __len__(self) -> int:
        return self.count

    def public_id(self, position: int) -> str:
        return unpack_string(self._arrays["doc_id_blob"], self._arrays["doc_id_offsets"], position)

    @cached_property
    def _max_idf(self) -> float:
        return float(bm25_idf(np.array([0.0]), self.count)[0])

    # -- searching -------------------------------------------------------------------------

    def search(
        self,
        topic: str,
        *,
        category: str | None = None,
        options: SearchOptions | None = None,
    ) -> Ranking:
        """Rank entries for `topic` (seed §4): browse; match; weak hits when the best entry does not
        cover the topic; the confidence fallback when no entry has any of its terms."""
        options = options or self.options
        allowed = self._allowed(category)
        if allowed is not None and not allowed.any():
            return self._materialized("browse" if not topic.strip() else "fallback", np.zeros(0, np.int64))
        if not topic.strip():
            return self._browse(category, allowed)
        plan = self._plan(topic, options.ranker)
        hits = self._query_hits(plan, options.ranker, allowed)
        head = hits.prefix(WEAK_SIZE)
        if not len(head.positions):
            return self._fallback(category, allowed)
        match_score = self._match_score(plan, head)
        if options.ranker == "bm25f" and match_score < self._threshold(options):
            weak = ArrayHits(head.positions[:WEAK_SIZE], head.scores[:WEAK_SIZE], self._tokens, ordered=True)
            return Ranking(mode="weak", matched=False, hits=weak, match_score=match_score)
        if options.expand:
            return self._expanded(hits, allowed, match_score)
        return Ranking(mode="match", matched=True, hits=hits, match_score=match_score)

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

    def _match_score(self, plan: QueryPlan, head: Prefix) -> float:
        """How well the best entry covers the topic: passage coverage + a bonus when it clearly leads.

        coverage = the largest share of the query's idf mass that one passage of the best entry
        (a sentence block with the entry's title, tags and id) contains; unknown terms count as
        uncovered. lead = ln(best / second score), capped. A question about a subject the knowledge
        base lacks shares only generic words with an entry, or meets its own words scattered over
        an entry that mentions the subject in passing; a covered question's words meet in one
        passage of an entry that stands out.
        """
        scores = head.scores
        lead = LEAD_CAP if len(scores) < 2 else min(float(scores[0] / scores[1]), LEAD_CAP)
        best = int(head.positions[0])
        coverage = coverage_of(plan, best, offsets=self._offsets, docs=self._docs, blocks=self._blocks)
        return coverage + LEAD_WEIGHT * float(np.log(lead))

    def _threshold(self, options: SearchOptions) -> float:
        if options.match_threshold is None:
            return DEFAULT_MATCH_THRESHOLD
        return options.match_threshold

    def coverage(self, topic: str, position: int) -> float:
        """How much of `topic`'s informative (idf-weighted) terms one passage of the entry holds."""
        plan = self._plan(topic, "bm25f")
        return coverage_of(plan, position, offsets=self._offsets, docs=self._docs, blocks=self._blocks)

    def _known_pieces(self, term: str) -> list[int]:
        """A Chinese word no entry contains, as the longest known words it is made of, left to right
        (鲷鱼 -> 鲷, 鱼; 投入使用 -> 投入, 使用); stopwords inside are dropped. [] when some part is
        unknown: then the word names something the knowledge base lacks."""
        if not is_han_word(term):
            return []
        pieces: list[int] = []
        start = 0
        while start < len(term):
            for end in range(len(term), start, -1):
                piece = term[start:end]
                term_id = self.vocabulary.lookup(piece)
                if term_id >= 0 or is_stopword(piece):
                    if term_id >= 0:
                        pieces.append(term_id)
                    start = end
                    break
            else:
                return []
        return pieces

    def _plan(self, topic: str, ranker: str) -> QueryPlan:
        counts = Counter(analyze_text(topic, self.analyzer))
        weights: dict[int, float] = {}
        coverage: dict[int, float] = {}
        unknown: list[str] = []
        for term, count in counts.items():
            term_id = self.vocabulary.lookup(term)
            # The segmenter splits a text by its dictionary: a compound in the question may be two
            # words in the entries. Its known pieces stand in for it, for ranking and coverage.
            pieces = [term_id] if term_id >= 0 else self._known_pieces(term)
            if not pieces:
                unknown.append(term)
                continue
            counts_for_coverage = is_coverage_term(term, self.analyzer)
            for piece in pieces:
                if piece in weights and term_id < 0:
                    continue  # a piece the question also has on its own: counted once
                weights[piece] = weights.get(piece, 0.0) + count
                idf = float(self._idf[piece]) ** COVERAGE_EXPONENT if counts_for_coverage else 0.0
                coverage[piece] = max(coverage.get(piece, 0.0), idf)
        known_terms = [t for t in counts if t not in unknown]
        # An unknown compound whose parts are known query terms is a segmentation artefact, not a
        # subject the knowledge base lacks.
        unknown_idf = sum(
            self._max_idf**COVERAGE_EXPONENT
            for term in unknown
            if is_coverage_term(term, self.analyzer) and not any(part in term for part in known_terms)
        )
        if ranker == "bm25f" and self._meta.get("has_tags", True):
            # Exact tags add weight but not coverage: the words of the tag are already terms.
            for candidate in exact_tag_candidates(topic, self.analyzer):
                term_id = self.vocabulary.lookup(candidate)
                if term_id >= 0 and term_id not in weights:
                    weights[term_id] = 1.0
                    coverage[term_id] = 0.0
        return QueryPlan(
            term_ids=np.array(list(weights), dtype=np.int64),
            weights=np.array(list(weights.values()), dtype=np.float64),
            informative_idf=np.array([coverage[t] for t in weights], dtype=np.float64),
            unknown_idf=unknown_idf,
        )

    def _allowed(self, category: str | None) -> np.ndarray | None:
        """Category filter applied before ranking; an unknown category allows nothing."""
        if category is None:
            return None
        if category not in self.categories:
            return np.zeros(self.count, dtype=bool)
        return np.asarray(self._category == self.categories.index(category))

    def _browse(self, category: str | None, allowed: np.ndarray | None) -> Ranking:
        key = -1 if category is None else self.categories.index(category)
        if key not in self._browse_cache:
            everything = np.arange(self.count, dtype=np.int64)
            self._browse_cache[key] = everything if allowed is None else everything[allowed]
        positions = self._browse_cache[key]
        browse = ArrayHits(positions, np.full(len(positions), BROWSE_SCORE), self._tokens, ordered=True)
        return Ranking(mode="browse", matched=True, hits=browse)

    def _fallback(self, category: str | None, allowed: np.ndarray | None) -> Ranking:
        """Seed §4: up to three entries by confidence descending (ties by position), not matched."""
        key = -1 if category is None else self.categories.index(category)
        if key not in self._fallback_cache:
            pool = np.arange(self.count) if allowed is None else np.flatnonzero(allowed)
            order = np.lexsort((pool, -self._confidence[pool]))
            self._fallback_cache[key] = pool[order[:FALLBACK_SIZE]].astype(np.int64)
        positions = self._fallback_cache[key]
        scores = np.asarray(self._confidence[positions], dtype=np.float64)
        return Ranking(mode="fallback", matched=False, hits=ArrayHits(positions, scores, self._tokens, ordered=True))

    def _expanded(self, hits: QueryHits, allowed: np.ndarray | None, match_score: float) -> Ranking:
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
        return Ranking(mode="match", matched=True, hits=expanded, public_id=self.public_id, match_score=match_score)

    def _materialized(self, mode: str, positions: np.ndarray) -> Ranking:
        hits = ArrayHits(positions, np.zeros(len(positions)), self._tokens, ordered=True)
        return Ranking(mode=mode, matched=mode not in ("fallback", "weak"), hits=hits)

    def with_options(self, options: SearchOptions) -> SearchIndex:
        """The same index with other default search options (shares the arrays)."""
        return SearchIndex({**self._meta, "options": asdict(options)}, self._arrays)

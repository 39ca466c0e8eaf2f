"""A topic as a query plan: its known terms with weights, what coverage counts, synonym alternatives."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from knowledge.retrieval.analysis import (
    AnalyzerConfig,
    analyze_text,
    exact_tag_candidates,
    is_coverage_term,
    is_han_word,
)
from knowledge.retrieval.scoring import CoverageGroup, QueryPlan
from knowledge.retrieval.stopwords import is_stopword
from knowledge.retrieval.synonyms import Rules, find_synonyms
from knowledge.retrieval.vocabulary import SortedTerms, Vocabulary

# Coverage weighs each query term by idf ** this. Measured on CMRC dev (docs/retrieval.md): 1 with
# passage coverage refuses more uncovered questions than 2 did with whole-entry coverage.
COVERAGE_EXPONENT = 1.0
# Ranking weight of a synonym's terms: an entry that says it the other way ranks like one that
# uses the topic's own words.
SYNONYM_WEIGHT = 1.0
# A topic word no entry contains weighs the idf of a word in no entry, times 1 - e^(-V / this) for a
# vocabulary of V terms: a knowledge base of a few hundred terms cannot be expected to hold a
# question's everyday words (the demo: V = 877, factor 0.58), a larger one can (V > 5,000: > 0.99).
# Measured on the development collections and the demo's dev questions (docs/retrieval.md).
VOCABULARY_SATURATION = 1000.0
# An unknown English word of at least COMPLETION_MIN letters stands for at most COMPLETIONS known
# terms that begin with it (the shortest first).
COMPLETION_MIN = 4
COMPLETIONS = 5
COMPLETION_WEIGHT = 1.0


def names_number(term: str) -> bool:
    """Whether a topic term names a number (a line, a year, a version, an error code): it holds a digit."""
    return any(map(str.isdigit, term))


class QueryPlanner:
    """Turns topics into plans against one index's vocabulary and idf."""

    def __init__(
        self,
        *,
        vocabulary: Vocabulary,
        idf: np.ndarray,
        analyzer: AnalyzerConfig,
        max_idf: float,
        synonyms: Rules,
        has_tags: bool,
        sorted_terms: SortedTerms | None = None,
    ) -> None:
        self._sorted = sorted_terms
        self._vocabulary = vocabulary
        self._idf = idf
        self._analyzer = analyzer
        self._max_idf = max_idf
        self._synonyms = synonyms
        self._has_tags = has_tags

    def known_pieces(self, term: str) -> list[int]:
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
                term_id = self._vocabulary.lookup(piece)
                if term_id >= 0 or is_stopword(piece):
                    if term_id >= 0:
                        pieces.append(term_id)
                    start = end
                    break
            else:
                return []
        return pieces

    def completions(self, term: str) -> list[int]:
        """Known terms that begin with an unknown English word (slug -> slugifi, slowlog -> ...):
        identifiers glue words together, questions write them apart. [] without a sorted vocabulary
        (older indexes) or for short or non-alphabetic words."""
        if self._sorted is None or len(term) < COMPLETION_MIN or not (term.isascii() and term.isalpha()):
            return []
        found = self._sorted.starting_with(term, limit=COMPLETIONS)
        return [term_id for term_id in found if self._vocabulary.term(term_id) != term]

    def plan(self, topic: str, ranker: str) -> QueryPlan:
        terms = analyze_text(topic, self._analyzer)
        matches = find_synonyms(terms, self._synonyms) if ranker == "bm25f" else []
        in_phrase = {i for match in matches for i in range(match.start, match.end)}
        builder = _PlanBuilder(self)
        builder.add_terms(Counter(t for i, t in enumerate(terms) if i not in in_phrase), counted=True)
        for match in matches:
            builder.add_synonym(terms[match.start : match.end], match.targets)
        if ranker == "bm25f" and self._has_tags:
            # Exact tags and aliases add weight but not coverage: their words are already terms.
            for candidate in exact_tag_candidates(topic, self._analyzer):
                builder.add_exact(self._vocabulary.lookup(candidate))
        return builder.plan()

    def term_coverage_weight(self, term: str, term_id: int) -> float:
        if not is_coverage_term(term, self._analyzer):
            return 0.0
        return float(self._idf[term_id]) ** COVERAGE_EXPONENT

    @cached_property
    def unknown_weight(self) -> float:
        saturation = 1.0 - math.exp(-len(self._vocabulary) / VOCABULARY_SATURATION)
        return float(self._max_idf**COVERAGE_EXPONENT * saturation)


class _PlanBuilder:
    """Collects ranking weights and coverage weights of one topic."""

    def __init__(self, planner: QueryPlanner) -> None:
        self._planner = planner
        self.weights: dict[int, float] = {}
        self.coverage: dict[int, float] = {}
        self.unknown_idf = 0.0  # coverage weight of unknown words inside synonym phrases
        self.unknown_count = 0  # topic words no entry contains
        self._groups: list[tuple[float, list[list[tuple[int, float]]]]] = []
        self.numbers: list[int] = []  # known topic terms holding a digit
        self.unknown_numbers = 0

    def _resolve(self, term: str) -> tuple[list[int], bool]:
        """The term ids standing for a topic term, and whether the term itself is known."""
        term_id = self._planner._vocabulary.lookup(term)
        if term_id >= 0:
            return [term_id], True
        # The segmenter splits a text by its dictionary: a compound in the question may be two
        # words in the entries. Its known pieces stand in for it, for ranking and coverage.
        return self._planner.known_pieces(term), False

    def add_terms(self, counts: Counter[str], *, counted: bool) -> None:
        unknown: list[str] = []
        known_terms: list[str] = []
        for term, count in counts.items():
            ids, known = self._resolve(term)
            number = counted and names_number(term)
            if not ids:
                unknown.append(term)
                self.unknown_numbers += number
                # Identifiers glue words together, questions write them apart: the terms that begin
                # with an unknown English word rank (slug -> slugify), but they do not cover it.
                for completion in self._planner.completions(term):
                    self.weights[completion] = self.weights.get(completion, 0.0) + count * COMPLETION_WEIGHT
                continue
            known_terms.append(term)
            if number and known:
                self.numbers.append(ids[0])
            for piece in ids:
                if piece in self.weights and not known:
                    continue  # a piece the question also has on its own: counted once
                self.weights[piece] = self.weights.get(piece, 0.0) + count
                if counted:
                    weight = self._planner.term_coverage_weight(term, piece)
                    self.coverage[piece] = max(self.coverage.get(piece, 0.0), weight)
        # An unknown compound whose parts are known query terms is a segmentation artefact, not a
        # subject the knowledge base lacks.
        self.unknown_count += sum(
            1
            for term in unknown
            if is_coverage_term(term, self._planner._analyzer) and not any(part in term for part in known_terms)
        )

    def _alternative(self, phrase: Sequence[str]) -> tuple[list[tuple[int, float]], float]:
        """A phrase's known terms with their coverage weight, and the weight of its unknown terms."""
        known: list[tuple[int, float]] = []
        missing = 0.0
        for term in phrase:
            ids, _ = self._resolve(term)
            if not ids:
                missing += self._planner.unknown_weight if is_coverage_term(term, self._planner._analyzer) else 0.0
            for piece in ids:
                known.append((piece, self._planner.term_coverage_weight(term, piece)))
        return known, missing

    def add_synonym(self, source: Sequence[str], targets: Sequence[Sequence[str]]) -> None:
        """The source phrase ranks as usual; its coverage becomes a group its synonyms may cover."""
        source_known, source_missing = self._alternative(source)
        weight = sum(w for _, w in source_known) + source_missing
        alternatives: list[list[tuple[int, float]]] = []
        for phrase, count in [(source, 1.0)] + [(t, SYNONYM_WEIGHT) for t in targets]:
            known, missing = self._alternative(phrase)
            for term_id, _ in known:
                self.weights[term_id] = self.weights.get(term_id, 0.0) + count
            if known:
                # Unknown words of an alternative still count in its own total: it covers a share.
                alternatives.append([*known, (-1, missing)] if missing else known)
        if weight > 0 and alternatives:
            self._groups.append((weight, alternatives))
        else:
            self.unknown_idf += source_missing

    def add_exact(self, term_id: int) -> None:
        if term_id >= 0 and term_id not in self.weights:
            self.weights[term_id] = 1.0
            self.coverage[term_id] = 0.0

    def plan(self) -> QueryPlan:
        ids = list(self.weights)
        index_of = {term_id: i for i, term_id in enumerate(ids)}
        groups = tuple(
            CoverageGroup(
                weight=weight,
                alternatives=tuple(
                    tuple((index_of[t], w) if t >= 0 else (-1, w) for t, w in alternative)
                    for alternative in alternatives
                ),
            )
            for weight, alternatives in self._groups
        )
        return QueryPlan(
            term_ids=np.array(ids, dtype=np.int64),
            weights=np.array([self.weights[t] for t in ids], dtype=np.float64),
            informative_idf=np.array([self.coverage.get(t, 0.0) for t in ids], dtype=np.float64),
            unknown_idf=self.unknown_idf + self.unknown_count * self._planner.unknown_weight,
            groups=groups,
            numbers=tuple(self.numbers),
            unknown_numbers=self.unknown_numbers,
        )

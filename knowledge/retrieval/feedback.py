"""Pseudo-relevance feedback for crowded collections: the best entries' shared heavy terms join the query.

On a collection where relevance is spread over many similar entries (Cranfield's abstracts: the
median question has 25 close competitors), a question's words find the neighbourhood and the terms
its best entries share find the rest of it. Elsewhere the same expansion drifts to neighbours a
question did not ask about (pylibs dev nDCG@10 0.840 -> 0.751), so a release switches it on only
when its own collection is crowded (calibration.feedback_on; docs/retrieval.md, "Feedback").

Ranking only: coverage, `matched` and the pack's floors keep the question's own terms.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse

from knowledge.retrieval.scoring import QueryPlan

FEEDBACK_ENTRIES = 5  # the best entries of the first pass the new terms come from
FEEDBACK_TERMS = 20  # at most this many terms join
FEEDBACK_WEIGHT = 0.3  # the heaviest joins at this query weight, the others in proportion
FEEDBACK_SHARED = 2  # a term joins only when at least this many of those entries hold it
# ...and when at most this share of all entries hold it: common terms' long postings would make the
# second pass cost several first passes (3.2x the plain search at 100k entries with the cap, 6.4x without).
FEEDBACK_MAX_SHARE = 0.1
# The arrays of a host's mapped copy of a feedback index that hold its ForwardIndex (index_format.served_arrays).
FORWARD_ARRAYS = ("forward_impacts", "forward_offsets", "forward_terms")


@dataclass(frozen=True, slots=True)
class ForwardIndex:
    """Each entry's terms and BM25F impacts: the postings transposed (entry `p` owns slots
    offsets[p]:offsets[p + 1] of `terms` and `impacts`)."""

    offsets: np.ndarray
    terms: np.ndarray
    impacts: np.ndarray
    entries: np.ndarray  # per term: how many entries hold it (its postings' length)
    joinable: np.ndarray  # per term: held by at most FEEDBACK_MAX_SHARE of the entries, so it may join

    @classmethod
    def transposed(cls, *, offsets: np.ndarray, docs: np.ndarray, impacts: np.ndarray, count: int) -> ForwardIndex:
        """The postings in the stable order of their entries. They are the rows of a term-by-entry sparse
        matrix (CSR: `offsets`, `docs`, `impacts`); its columns (CSC) are the forward index, which scipy
        makes in one counting pass with nothing held beside the result: 0.10 s of CPU for 7.9 million
        postings of 100,000 entries, where sorting them by entry in numpy's 16-bit radix passes took 0.50.
        Its index arrays are 32-bit while the postings fit: given the int64 offsets, scipy made every index
        array 64-bit, a copy of the entry ids and a result each narrowed again (151 MiB held and 0.40 s for
        7.9 million postings, where 32-bit ones take 61 MiB and 0.12 s; the peak of a build at 100,000)."""
        narrow = int(offsets[-1]) <= np.iinfo(np.int32).max and count <= np.iinfo(np.int32).max
        offsets_given = offsets.astype(np.int32) if narrow else offsets
        by_term = sparse.csr_array((impacts, docs, offsets_given), shape=(len(offsets) - 1, count))
        by_entry = by_term.tocsc()
        return cls.of(
            offsets=by_entry.indptr.astype(np.int64),
            terms=by_entry.indices.astype(np.int32, copy=False),
            impacts=by_entry.data,
            post_offsets=offsets,
            count=count,
        )

    @classmethod
    def of(
        cls, *, offsets: np.ndarray, terms: np.ndarray, impacts: np.ndarray, post_offsets: np.ndarray, count: int
    ) -> ForwardIndex:
        """The forward index of these transposed arrays (made by `transposed`, or mapped from a host's
        file), with what each term's postings give."""
        entries = np.diff(post_offsets)
        joinable = entries <= FEEDBACK_MAX_SHARE * count
        return cls(offsets=offsets, terms=terms, impacts=impacts, entries=entries, joinable=joinable)

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays a host's file holds it in (FORWARD_ARRAYS)."""
        return dict(zip(FORWARD_ARRAYS, (self.impacts, self.offsets, self.terms), strict=True))


def expanded_plan(plan: QueryPlan, positions: np.ndarray, scores: np.ndarray, forward: ForwardIndex) -> QueryPlan:
    """`plan` plus the terms the best `positions` (first-pass order) share: each term's impacts summed
    over them, weighted by the entry's score over the best one; the FEEDBACK_TERMS heaviest held by at
    least FEEDBACK_SHARED of them (and at most FEEDBACK_MAX_SHARE of all entries) join at
    FEEDBACK_WEIGHT x their share of the heaviest. They never count towards coverage (weight 0 there)."""
    best = positions[:FEEDBACK_ENTRIES]
    if len(best) < FEEDBACK_SHARED or scores[0] <= 0:
        return plan
    bounds = list(zip(forward.offsets[best].tolist(), forward.offsets[best + 1].tolist(), strict=True))
    terms = np.concatenate([forward.terms[start:end] for start, end in bounds])
    # Each impact times its entry's float32 share of the best score, as `impacts * share` gave per entry.
    # (the same float64 quotients as float(score) / float(scores[0]) one by one)
    shares = (np.asarray(scores[: len(best)], dtype=np.float64) / float(scores[0])).astype(np.float32)
    impacts = np.concatenate([forward.impacts[start:end] for start, end in bounds])
    weighted = impacts * shares.repeat([end - start for start, end in bounds])
    ids, group, order = _grouped(terms)
    held = np.bincount(group)
    # Each term's mass summed in the order its entries rank, as np.bincount over np.unique's inverse summed it.
    mass = np.bincount(group, weights=weighted[order], minlength=len(ids))
    keep = (held >= FEEDBACK_SHARED) & forward.joinable[ids] & ~_among(ids, plan.term_ids)
    ids, mass = ids[keep], mass[keep]
    if not len(ids):
        return plan
    # Heaviest first; ties by term id so the same release always expands a topic alike.
    chosen = np.lexsort((ids, -mass))[:FEEDBACK_TERMS]
    added = FEEDBACK_WEIGHT * mass[chosen] / mass[chosen[0]]
    return replace(
        plan,
        term_ids=np.concatenate([plan.term_ids, ids[chosen].astype(plan.term_ids.dtype)]),
        weights=np.concatenate([plan.weights, added]),
        informative_idf=np.concatenate([plan.informative_idf, np.zeros(len(chosen))]),
    )


def _among(ids: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """np.isin(ids, asked) for sorted unique `ids` and a handful of `asked`: a binary search each
    (np.isin's general path was a quarter of expanded_plan: 85-110 -> 60-85 us per call on the dev sets)."""
    found = np.zeros(len(ids), dtype=bool)
    slots = ids.searchsorted(asked)
    inside = slots < len(ids)
    slots = slots[inside]
    found[slots[ids[slots] == asked[inside]]] = True
    return found


def _grouped(terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(terms) without its general path (a third of expanded_plan): the distinct terms, the
    group of each term in a stable sort of `terms`, and that sort (so each group keeps `terms`' order)."""
    order = terms.argsort(kind="stable")
    ordered = terms[order]
    first = np.empty(len(ordered), dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first], first.cumsum() - 1, order

"""Why a pack is what it is: the topic's analysis, each candidate's score by term, field and factor, the
`matched` decision, and for any entry asked about why it is in the pack or not (pure, deterministic).

Scores are the engine's own: a hit's score is the sum over query terms of weight x BM25F impact
(the impact already weighs the fields: title, tags, aliases and id above summary and body), times
the seed's confidence factor 0.85 + 0.15 x confidence. Each term's part is shown with the fields of
the entry it occurs in, as the engine analysed them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from knowledge.retrieval.analysis import analyze_text
from knowledge.retrieval.index import (
    COVERAGE_KNEE,
    COVERAGE_SLOPE,
    MATCH_COVERAGE_FLOOR,
    WEAK_SIZE,
    SearchIndex,
    coverage_penalty,
)
from knowledge.retrieval.packing import Pack
from knowledge.retrieval.payload import ContextQuery, ReleaseView
from knowledge.retrieval.postings import FIELDS, analyze_fields
from knowledge.retrieval.ranking import Hit, Ranking
from knowledge.retrieval.relevance import Verdict
from knowledge.retrieval.scoring import QueryPlan
from knowledge.retrieval.synonyms import find_synonyms

CANDIDATES = 10  # the best hits shown with their breakdown
DEPTH = 2000  # how far down the ranking an entry asked about is looked for

REASONS = {
    "in_pack": "In the pack.",
    "over_budget": "Relevant, but it did not fit in the budget left (raise budget).",
    "over_limit": "Relevant, but the pack had reached its limit of entries.",
    "below_relative_floor": "Scored under {floor:.0%} of the best hit's score: not relevant enough to pack.",
    "below_coverage_floor": "No passage of it holds {floor:.0%} of the topic's informative words.",
    "not_among_weak_hits": "Nothing covers the topic; only the best {weak} weak hits are returned.",
    "fallback": "No entry shares a word with the topic: the pack is the seed's fallback by confidence, never cited.",
    "no_common_term": "It shares no analysed word with the topic.",
    "other_category": "It is in category {category}, and the request asked for {asked}.",
    "ranked_too_low": "It ranks below the {depth} best hits.",
    "retired": "It is retired{replaced}: retired entries are never packed.",
    "not_public": "It is not public in this release: a draft, under review, or published after it was built.",
    "not_found": "There is no such entry in this namespace.",
    "browse": "An empty topic browses entries in ID order; it is {state}.",
}


def _reason(code: str, **fields: Any) -> dict[str, Any]:
    return {"outcome": code, "reason": REASONS[code].format(**fields)}


def _analysis(index: SearchIndex, topic: str, plan: QueryPlan) -> dict[str, Any]:
    analysed = analyze_text(topic, index.analyzer)
    words = list(dict.fromkeys(analysed))
    return {
        "terms": [
            {"term": term, "known": index.vocabulary.lookup(term) >= 0, "idf": round(index.term_idf(term), 4)}
            for term in words
        ],
        "searched": [
            {
                "term": index.vocabulary.term(int(term_id)),
                "weight": round(float(weight), 4),
                "coverageWeight": round(float(cover), 4),
            }
            for term_id, weight, cover in zip(plan.term_ids, plan.weights, plan.informative_idf, strict=True)
        ],
        "unknownWeight": round(plan.unknown_idf, 4),
        # The release's editor-kept synonym sets that matched words of the topic (analysed terms).
        "synonyms": [
            {
                "terms": " ".join(analysed[match.start : match.end]),
                "alsoSearched": [" ".join(target) for target in match.targets],
            }
            for match in (find_synonyms(analysed, index.synonyms) if index.options.ranker == "bm25f" else [])
        ],
    }


def _matching(index: SearchIndex, ranking: Ranking) -> dict[str, Any]:
    coverage = ranking.coverage
    gate = ranking.gate_score
    return {
        "mode": ranking.mode,
        "matched": ranking.matched,
        "matchScore": None if ranking.match_score is None else round(ranking.match_score, 4),
        "threshold": round(index.match_threshold, 4),
        "coverageFloor": round(MATCH_COVERAGE_FLOOR, 4),
        "coverageKnee": COVERAGE_KNEE,
        "coverageSlope": COVERAGE_SLOPE,
        "bestCoverage": None
        if coverage is None
        else {"passage": round(coverage.passage, 4), "entry": round(coverage.entry, 4)},
        "coveragePenalty": None if coverage is None else round(coverage_penalty(coverage.entry), 4),
        "gateScore": None if gate is None or not np.isfinite(gate) else round(gate, 4),
        "belowCoverageFloor": gate is not None and not np.isfinite(gate),
        # A crowded collection's release ranks again with the terms its best entries share (feedback.py).
        "feedback": index.options.feedback,
        "rule": "matched when gateScore reaches threshold: matchScore "
        "(best passage coverage + a bonus when it clearly leads - a penalty for words no entry contains "
        "+ a bonus when it holds the topic's rarest known word - a penalty for the topic's numbers it lacks) "
        "- coverageSlope x how far the best entry's coverage is below coverageKnee; "
        "never when it holds less than coverageFloor of the topic.",
    }


def _fields(view: ReleaseView, index: SearchIndex, position: int, terms: Sequence[str]) -> dict[str, dict[str, int]]:
    """For each query term, how often it occurs in each field of the entry (as the engine analyses them)."""
    fields = analyze_fields(view.entries[position].as_document(), index.analyzer)
    counted = [Counter(term for part in field for term in part) for field in fields]
    return {term: {FIELDS[i]: counts[term] for i, counts in enumerate(counted) if counts[term]} for term in terms}


def _breakdown(index: SearchIndex, view: ReleaseView, plan: QueryPlan, hit: Hit) -> dict[str, Any]:
    at = np.array([hit.position], dtype=np.int64)
    impacts = index.term_impacts(plan, at)[:, 0]
    factor = index.confidence_factor_of(hit.position)
    names = [index.vocabulary.term(int(t)) for t in plan.term_ids]
    fields = _fields(view, index, hit.position, names)
    passage, entry = index.coverage_at(plan, at)
    score = float(np.sum(plan.weights * impacts)) * factor  # the engine's sum (in float32 there)
    return {
        "score": round(score, 4),
        "confidenceFactor": round(factor, 4),
        "terms": [
            {"term": name, "part": round(float(weight * impact * factor), 4), "fields": fields[name]}
            for name, weight, impact in zip(names, plan.weights, impacts, strict=True)
            if impact > 0
        ],
        "coverage": {"passage": round(float(passage[0]), 4), "entry": round(float(entry[0]), 4)},
        **({"via": hit.via} if hit.via else {}),
    }


def _ranked(ranking: Ranking, depth: int) -> Iterator[tuple[int, Hit]]:
    for rank, hit in enumerate(ranking, start=1):
        if rank > depth:
            return
        yield rank, hit


def _outcome(hit: Hit, rank: int, *, ranking: Ranking, pack: Pack, query: ContextQuery) -> dict[str, Any]:
    floor = ranking.relevance
    verdict = floor.verdict(hit, first=rank == 1) if floor is not None else Verdict.KEEP
    if ranking.mode == "fallback":
        code = "fallback"
    elif hit.position in {h.position for h in pack.packed}:
        code = "in_pack"
    elif hit.position in {h.position for h in pack.omitted}:
        code = "over_budget"
    elif verdict is Verdict.STOP:
        code = "below_relative_floor"
    elif verdict is Verdict.SKIP:
        code = "below_coverage_floor"
    elif query.limit is not None and len(pack.packed) >= query.limit:
        code = "over_limit"
    else:
        code = "over_budget"  # the packer stopped before it (the budget left was below any hit's cost)
    return _reason(code, floor=(floor.relative if code == "below_relative_floor" else floor.absolute) if floor else 0)


def _asked(
    entry_id: str,
    *,
    index: SearchIndex,
    plan: QueryPlan,
    view: ReleaseView,
    query: ContextQuery,
    ranking: Ranking,
    pack: Pack,
    ranks: dict[int, tuple[int, Hit]],
    retired: dict[str, str | None],
    unpublished: frozenset[str],
) -> dict[str, Any]:
    position = next((i for i, e in enumerate(view.entries) if e.id == entry_id), None)
    if position is None:
        if entry_id in retired:
            replaced = f", replaced by {retired[entry_id]}" if retired[entry_id] else ""
            return {"id": entry_id, **_reason("retired", replaced=replaced)}
        return {"id": entry_id, **_reason("not_public" if entry_id in unpublished else "not_found")}
    entry = view.entries[position]
    found = ranks.get(position)
    if query.category is not None and entry.category != query.category:
        answer = _reason("other_category", category=entry.category, asked=query.category)
    elif ranking.mode == "browse":
        answer = _reason("browse", state="in the pack" if position in {h.position for h in pack.packed} else "past it")
    elif found is not None:
        rank, hit = found
        answer = {"rank": rank, **_outcome(hit, rank, ranking=ranking, pack=pack, query=query)}
        answer["breakdown"] = _breakdown(index, view, plan, hit)
    elif not index.term_impacts(plan, np.array([position], dtype=np.int64)).any():
        answer = _reason("no_common_term")
    else:
        code = "not_among_weak_hits" if ranking.mode == "weak" else "ranked_too_low"
        answer = {
            **_reason(code, weak=WEAK_SIZE, depth=DEPTH),
            "breakdown": _breakdown(index, view, plan, Hit(position, 0.0)),
        }
    return {"id": entry_id, **answer}


def explain_context(
    *,
    index: SearchIndex,
    view: ReleaseView,
    query: ContextQuery,
    ranking: Ranking,
    pack: Pack,
    asked: Sequence[str] = (),
    retired: dict[str, str | None] | None = None,
    unpublished: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The explanation of one /api/context answer (the same ranking and pack the answer was built from)."""
    plan = index.plan(query.topic, index.options.ranker)
    depth = max(DEPTH, CANDIDATES)
    ranks = {hit.position: (rank, hit) for rank, hit in _ranked(ranking, depth)}
    ordered = sorted(ranks.values())[:CANDIDATES]
    floor = ranking.relevance
    return {
        "analysis": _analysis(index, query.topic, plan),
        "matching": _matching(index, ranking),
        "floors": None
        if floor is None
        else {"relative": floor.relative, "coverage": floor.absolute, "topScore": round(floor.top_score, 4)},
        "budget": {"budget": query.budget, "usedTokens": pack.used_tokens, "limit": query.limit},
        "candidates": [
            {
                "id": view.entries[hit.position].id,
                "rank": rank,
                "tokens": view.entries[hit.position].tokens,
                **_outcome(hit, rank, ranking=ranking, pack=pack, query=query),
                "breakdown": _breakdown(index, view, plan, hit),
            }
            for rank, hit in ordered
        ],
        "entries": [
            _asked(
                entry_id,
                index=index,
                plan=plan,
                view=view,
                query=query,
                ranking=ranking,
                pack=pack,
                ranks=ranks,
                retired=retired or {},
                unpublished=unpublished,
            )
            for entry_id in dict.fromkeys(asked)
        ],
    }

"""The /api/context response of seed §4, built from a ranking and a pack: pure, deterministic, orjson-ready."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.retrieval.contract.shapes import CONTEXT, ContextFacts, Packed, Served
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import BUDGET_MAX, Pack, pack_to_budget
from knowledge.retrieval.ranking import Ranking
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo, ReleaseStamp

# The budget tiers of seed §4 ("预算档位"); hints suggest the next one up.
BUDGET_TIERS = (800, 2000, 4000, 8000)


@dataclass(frozen=True, slots=True)
class ContextQuery:
    """The normalized request: `budget` is already clamped, `category` None when absent."""

    topic: str
    budget: int
    category: str | None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class ReleaseView:
    """What a payload needs from the release it is served from."""

    release_id: int
    namespace: NamespaceInfo
    stamp: ReleaseStamp
    entries: Sequence[EntryRecord]  # index position i is entries[i]


def suggested_budget(tokens: int) -> int:
    """The smallest tier of seed §4 that holds `tokens`, else `tokens` rounded up to a hundred."""
    for tier in BUDGET_TIERS:
        if tokens <= tier:
            return tier
    return -(-tokens // 100) * 100


def _hint(query: ContextQuery, ranking: Ranking, pack: Pack, namespace: NamespaceInfo) -> str | None:
    """Seed §4: a hint only where a person or agent must act, in the namespace's language."""
    text = messages_for(namespace.language)
    if not ranking.matched:
        wording = text.hint_weak_match if ranking.mode == "weak" else text.hint_no_match
        return wording.format(name=namespace.name)
    if not pack.packed and ranking.min_tokens is not None and query.limit != 0:
        if ranking.min_tokens > BUDGET_MAX:
            return text.hint_entry_too_large.format(min_tokens=ranking.min_tokens)
        return text.hint_below_cheapest.format(
            budget=query.budget, min_tokens=ranking.min_tokens, suggested=suggested_budget(ranking.min_tokens)
        )
    if pack.truncated:
        if query.budget >= BUDGET_MAX:
            return text.hint_truncated_at_max
        return text.hint_truncated.format(suggested=suggested_budget(query.budget + 1))
    return None


def _relevance(score: float, top: float) -> float:
    """Seed §4: round(score / top score, 2), kept inside (0, 1]."""
    if top <= 0:
        return 1.0
    return max(0.01, round(score / top, 2))


def _hit_facts(ranking: Ranking) -> tuple[int, int | None]:
    """`hitCount` and `minEntryTokens` describe the hit set; the zero-hit fallback (entries by
    confidence, seed §4) has none, so it reports 0 and null rather than the fallback entries'."""
    if ranking.mode == "fallback":
        return 0, None
    return ranking.total, ranking.min_tokens


def context_payload(*, query: ContextQuery, ranking: Ranking, pack: Pack, view: ReleaseView) -> dict[str, Any]:
    """The response body of seed §4, in the contract's shape (``contract.shapes.CONTEXT``)."""
    # The ranking's first hit is always packed or omitted, so this is the top score of the hit set.
    top = max((hit.score for hit in pack.packed + pack.omitted), default=0.0)
    hit_count, min_entry_tokens = _hit_facts(ranking)
    packed = tuple(
        Packed(
            served=Served(view.entries[hit.position], view.namespace, view.stamp),
            score=round(hit.score, 3),
            relevance=_relevance(hit.score, top),
            via=hit.via,
        )
        for hit in pack.packed
    )
    facts = ContextFacts(
        topic=query.topic,
        budget=query.budget,
        category=query.category,
        stamp=view.stamp,
        release_id=view.release_id,
        used_tokens=pack.used_tokens,
        matched=ranking.matched,
        truncated=pack.truncated,
        min_entry_tokens=min_entry_tokens,
        hint=_hint(query, ranking, pack, view.namespace),
        packed=packed,
        rules=view.namespace.rules,
        hit_count=hit_count,
        omitted=tuple(view.entries[hit.position] for hit in pack.omitted),
    )
    return CONTEXT.json(facts)


def context_pack(*, index: SearchIndex, view: ReleaseView, query: ContextQuery) -> tuple[Ranking, Pack]:
    """Rank and pack one /api/context request (evaluation reads the ranking too)."""
    ranking = index.search(query.topic, category=query.category)
    entries = view.entries
    pack = pack_to_budget(
        ranking,
        tokens_of=lambda position: entries[position].tokens,
        budget=query.budget,
        min_tokens=ranking.min_tokens,
        limit=query.limit,
        relevance=ranking.relevance,
    )
    return ranking, pack


def context_build(*, index: SearchIndex, view: ReleaseView, query: ContextQuery) -> dict[str, Any]:
    """Rank, pack and render one /api/context request against one release."""
    ranking, pack = context_pack(index=index, view=view, query=query)
    return context_payload(query=query, ranking=ranking, pack=pack, view=view)

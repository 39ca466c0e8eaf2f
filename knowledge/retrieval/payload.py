"""The /api/context response of seed §4, built from a ranking and a pack: pure, deterministic, orjson-ready."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import BUDGET_MAX, Pack, pack_to_budget
from knowledge.retrieval.ranking import Ranking
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo, ReleaseStamp

SOURCE = "api/context"
# The budget tiers of seed §4 ("预算档位"); hints suggest the next one up.
BUDGET_TIERS = (800, 2000, 4000, 8000)
STALE_MONTHS = 12  # rule EG-201.4: warn when `updated` is older than twelve months


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


def is_stale(updated: str, *, revision: str) -> bool:
    """True when `updated` is more than twelve months before the release's revision date."""
    try:
        then, now = date.fromisoformat(updated), date.fromisoformat(revision)
    except ValueError:
        return False
    try:
        year_before = now.replace(year=now.year - 1)
    except ValueError:  # 29 February
        year_before = now.replace(year=now.year - 1, day=28)
    return then < year_before


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


def entry_item(
    entry: EntryRecord, *, score: float, relevance: float, view: ReleaseView, via: str | None
) -> dict[str, Any]:
    """One element of `entries`: the seed §4 fields in order, then Evergreen's additive fields."""
    item: dict[str, Any] = {
        "id": entry.id,
        "category": entry.category,
        "title": entry.title,
        "summary": entry.summary,
        "body": entry.body,
        "tags": list(entry.tags),
        "confidence": entry.confidence,
        "tokens": entry.tokens,
        "updated": entry.updated,
        "score": round(score, 3),
        "relevance": relevance,
        "version": entry.version,
        "contentHash": entry.content_hash,
        "stale": is_stale(entry.updated, revision=view.stamp.revision),
        "url": view.namespace.url(f"api/entries/{entry.id}"),
    }
    if via is not None:
        item["via"] = via  # link-graph expansion: the ID of the hit that brought this entry in
    return item


def citation_item(entry: EntryRecord, *, view: ReleaseView) -> dict[str, Any]:
    text = messages_for(view.namespace.language)
    return {
        "marker": f"[{entry.id}]",
        "entryId": entry.id,
        "url": view.namespace.url(f"context.json#{entry.id}"),
        "text": text.citation.format(name=view.namespace.name, id=entry.id, title=entry.title),
        "confidence": entry.confidence,
    }


def _hit_facts(ranking: Ranking) -> tuple[int, int | None]:
    """`hitCount` and `minEntryTokens` describe the hit set; the zero-hit fallback (entries by
    confidence, seed §4) has none, so it reports 0 and null rather than the fallback entries'."""
    if ranking.mode == "fallback":
        return 0, None
    return ranking.total, ranking.min_tokens


def context_payload(*, query: ContextQuery, ranking: Ranking, pack: Pack, view: ReleaseView) -> dict[str, Any]:
    """The response body of seed §4 in its field order; additive fields (documented in the README) follow."""
    # The ranking's first hit is always packed or omitted, so this is the top score of the hit set.
    top = max((hit.score for hit in pack.packed + pack.omitted), default=0.0)
    packed = [view.entries[hit.position] for hit in pack.packed]
    hit_count, min_entry_tokens = _hit_facts(ranking)
    return {
        "query": {"topic": query.topic, "budget": query.budget, "category": query.category},
        "knowledgeVersion": view.stamp.knowledge_version,
        "revision": view.stamp.revision,
        "usedTokens": pack.used_tokens,
        "budget": query.budget,
        "matched": ranking.matched,
        "truncated": pack.truncated,
        "entryCount": len(pack.packed),
        "minEntryTokens": min_entry_tokens,
        "hint": _hint(query, ranking, pack, view.namespace),
        "entries": [
            entry_item(entry, score=hit.score, relevance=_relevance(hit.score, top), view=view, via=hit.via)
            for entry, hit in zip(packed, pack.packed, strict=True)
        ],
        "citations": [citation_item(entry, view=view) for entry in packed],
        "rules": list(view.namespace.rules),
        "generatedAt": view.stamp.generated_at,
        "source": SOURCE,
        "releaseId": view.release_id,
        "hitCount": hit_count,
        "omitted": [
            {"id": view.entries[hit.position].id, "tokens": view.entries[hit.position].tokens} for hit in pack.omitted
        ],
    }


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

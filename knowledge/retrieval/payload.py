"""The /api/context response of seed §4, built from a ranking and a pack: pure, deterministic, orjson-ready."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.retrieval.contract.shapes import (
    ContextFacts,
    Omitted,
    Packed,
    Served,
    agent_rules,
    context_document,
    payload_tokens,
)
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import BUDGET_MAX, Pack, cheapest_matching, pack_to_budget
from knowledge.retrieval.path_ranking import PathRanking, path_search
from knowledge.retrieval.paths import PathScope
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
    budget_mode: str = "entries"  # "payload": the whole response, not only the entries, fits the budget
    paths: tuple[str, ...] = ()  # normalized and sorted (knowledge.retrieval.paths); () = not sent


@dataclass(frozen=True, slots=True)
class ReleaseView:
    """What a payload needs from the release it is served from."""

    release_id: int
    namespace: NamespaceInfo
    stamp: ReleaseStamp
    entries: Sequence[EntryRecord]  # index position i is entries[i]
    scope: PathScope | None = None  # the entries' path globs, compiled once per loaded release

    def path_scope(self) -> PathScope:
        return self.scope if self.scope is not None else PathScope(self.entries)


def suggested_budget(tokens: int) -> int:
    """The smallest tier of seed §4 that holds `tokens`, else `tokens` rounded up to a hundred."""
    for tier in BUDGET_TIERS:
        if tokens <= tier:
            return tier
    return -(-tokens // 100) * 100


def _hint(
    query: ContextQuery, ranking: Ranking, pack: Pack, namespace: NamespaceInfo, min_tokens: int | None
) -> str | None:
    """Seed §4: a hint only where a person or agent must act, in the namespace's language.

    `min_tokens` is the response's `minEntryTokens`: an empty pack is said to be below the cheapest
    matching entry only when its budget is, so the hint and that field never disagree.
    """
    text = messages_for(namespace.language)
    if not ranking.matched:
        wording = text.hint_weak_match if ranking.mode == "weak" else text.hint_no_match
        if isinstance(ranking, PathRanking) and ranking.no_path_applies:
            wording = text.hint_no_path_applies
        return wording.format(name=namespace.name)
    if not pack.packed and min_tokens is not None and query.budget < min_tokens and query.limit != 0:
        if min_tokens > BUDGET_MAX:
            return text.hint_entry_too_large.format(min_tokens=min_tokens)
        return text.hint_below_cheapest.format(
            budget=query.budget, min_tokens=min_tokens, suggested=suggested_budget(min_tokens)
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


def _hit_facts(ranking: Ranking, tokens_of: Callable[[int], int]) -> tuple[int, int | None]:
    """`hitCount` and `minEntryTokens` describe the hit set; the zero-hit fallback (entries by
    confidence, seed §4) has none, so it reports 0 and null rather than the fallback entries'.
    `minEntryTokens` is the cheapest *matching* entry: a hit below the relevance floors is never
    packed, so a budget of its cost could still pack nothing (packing.cheapest_matching)."""
    if ranking.mode == "fallback":
        return 0, None
    return ranking.total, cheapest_matching(ranking, tokens_of=tokens_of)


def context_payload(
    *, query: ContextQuery, ranking: Ranking, pack: Pack, view: ReleaseView, index: SearchIndex | None = None
) -> dict[str, Any]:
    """The response body of seed §4, in the contract's shape (``contract.shapes.CONTEXT``).

    With the `index` the view's entries were compiled into, what is said of omitted entries (their ID
    and cost) is read from the index rather than from each entry's record (view.entries may parse
    an entry on each read: knowledge.retrieval.entry_table).
    """
    # The ranking's first hit is always packed or omitted, so this is the top score of the hit set.
    top = max((hit.score for hit in pack.packed + pack.omitted), default=0.0)
    hit_count, min_entry_tokens = _hit_facts(ranking, _tokens_of(view, index))
    matched_paths = ranking.matched_paths if isinstance(ranking, PathRanking) else {}
    packed = tuple(
        Packed(
            served=Served(view.entries[hit.position], view.namespace, view.stamp),
            score=round(hit.score, 3),
            relevance=_relevance(hit.score, top),
            via=hit.via,
            matched_paths=matched_paths.get(hit.position, ()),
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
        hint=_hint(query, ranking, pack, view.namespace, min_entry_tokens),
        packed=packed,
        rules=tuple(agent_rules(view.namespace)),
        hit_count=hit_count,
        omitted=tuple(_omitted(hit.position, view, index) for hit in pack.omitted),
        budget_mode=query.budget_mode,
        paths=query.paths,
        limit=query.limit,
        over_limit=tuple(_omitted(hit.position, view, index) for hit in pack.over_limit),
    )
    document = context_document(facts)
    if query.budget_mode == "payload" and not pack.packed and ranking.matched and query.limit != 0:
        floor = needed = document["payloadTokens"]
        cheapest = _packed(ranking, view, query, min_entry_tokens or 0, index)
        if cheapest.packed:  # what the response costs with the cheapest hit in it
            needed = context_payload(query=query, ranking=ranking, pack=cheapest, view=view, index=index)[
                "payloadTokens"
            ]
        if needed > query.budget or floor > query.budget:
            _payload_floor_hint(document, floor=floor, needed=needed, query=query, view=view)
    return document


def _payload_floor_hint(
    document: dict[str, Any], *, floor: int, needed: int, query: ContextQuery, view: ReleaseView
) -> None:
    """Say what an entry-free payload costs: the floor named is the answer's own `payloadTokens`, hint included.

    The hint is longer than the one it replaces, and its numbers count themselves, so it is written
    again until the floor it names is the cost it gives (two or three rounds).
    """
    text = messages_for(view.namespace.language).hint_payload_floor
    for _ in range(4):  # a fixed point within two rounds: only the numbers' digits change after the first
        suggested = suggested_budget(max(needed, floor))
        document["hint"] = text.format(floor=floor, needed=needed, budget=query.budget, suggested=suggested)
        cost = payload_tokens(document)
        if cost == floor:
            return
        floor = cost


def _omitted(position: int, view: ReleaseView, index: SearchIndex | None) -> Omitted:
    if index is None:
        entry = view.entries[position]
        return Omitted(entry.id, entry.tokens)
    return Omitted(index.public_id(position), index.entry_tokens(position))


def _tokens_of(view: ReleaseView, index: SearchIndex | None) -> Callable[[int], int]:
    """An entry's cost by position: from the index it was compiled into when there is one (see context_payload)."""
    if index is not None:
        return index.entry_tokens
    entries = view.entries
    return lambda position: entries[position].tokens


def _packed(
    ranking: Ranking, view: ReleaseView, query: ContextQuery, budget: int, index: SearchIndex | None = None
) -> Pack:
    if isinstance(ranking, PathRanking):
        return ranking.pack(budget=budget, limit=query.limit)
    return pack_to_budget(
        ranking,
        tokens_of=_tokens_of(view, index),
        budget=budget,
        min_tokens=ranking.min_tokens,
        limit=query.limit,
        relevance=ranking.relevance,
    )


def context_pack(*, index: SearchIndex, view: ReleaseView, query: ContextQuery) -> tuple[Ranking, Pack]:
    """Rank and pack one /api/context request (evaluation reads the ranking too).

    With ``budget_mode == "payload"`` the entries get what the rest of the response leaves: a binary
    search over the entries' budget finds the largest whose rendered response (``payloadTokens``:
    JSON keys, citations, rules included) fits the budget; about 13 renders, once per release and
    query (the bytes are cached).
    """
    ranking = _ranked(index, view, query)
    pack = _packed(ranking, view, query, query.budget, index)
    if query.budget_mode != "payload" or _payload(query, ranking, pack, view, index) <= query.budget:
        return ranking, pack
    low, high = 0, pack.used_tokens - 1  # the largest entry budget known to fit, and the highest left to try
    best = _packed(ranking, view, query, 0, index)
    while low <= high:
        middle = (low + high) // 2
        candidate = _packed(ranking, view, query, middle, index)
        if _payload(query, ranking, candidate, view, index) <= query.budget:
            best, low = candidate, max(middle, candidate.used_tokens) + 1
        else:
            high = min(middle, candidate.used_tokens) - 1
    return ranking, best


def _ranked(index: SearchIndex, view: ReleaseView, query: ContextQuery) -> Ranking:
    if not query.paths:
        return index.search(query.topic, category=query.category)
    entries = view.entries
    return path_search(
        index=index,
        scope=view.path_scope(),
        topic=query.topic,
        category=query.category,
        paths=query.paths,
        category_of=lambda position: entries[position].category,
        tokens_of=index.entry_tokens,
    )


def _payload(query: ContextQuery, ranking: Ranking, pack: Pack, view: ReleaseView, index: SearchIndex) -> int:
    tokens: int = context_payload(query=query, ranking=ranking, pack=pack, view=view, index=index)["payloadTokens"]
    return tokens


def context_build(*, index: SearchIndex, view: ReleaseView, query: ContextQuery) -> dict[str, Any]:
    """Rank, pack and render one /api/context request against one release."""
    ranking, pack = context_pack(index=index, view=view, query=query)
    return context_payload(query=query, ranking=ranking, pack=pack, view=view, index=index)

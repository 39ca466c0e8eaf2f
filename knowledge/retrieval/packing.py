"""Budget packing of seed §4: whole entries in rank order, skip what does not fit, never exceed the budget."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from knowledge.retrieval.ranking import Hit, Ranking
from knowledge.retrieval.relevance import PackFloor, Verdict

BUDGET_DEFAULT = 2000
BUDGET_MIN = 200  # seed §4: budget is clamped to [200, 8000]
BUDGET_MAX = 8000
# After the budget first refuses an entry, try at most this many further hits. Past it the pack stops
# (truncated stays true): it bounds the work of a large hit set at a small budget, and only ever
# gives up entries that would have been squeezed into the leftover tokens of an already full pack.
MAX_SKIPS = 256
OMITTED_LISTED = 20  # how many left-out hits the response names (the count covers them all)


def clamp_budget(budget: int | None) -> int:
    """Seed §4: default 2000, clamped to [200, 8000]."""
    if budget is None:
        return BUDGET_DEFAULT
    return max(BUDGET_MIN, min(BUDGET_MAX, budget))


@dataclass(frozen=True, slots=True)
class Pack:
    """What went into the response and what the budget left out."""

    packed: tuple[Hit, ...]
    omitted: tuple[Hit, ...]  # hits seen and refused for budget, in rank order (first OMITTED_LISTED)
    used_tokens: int
    truncated: bool  # a matching entry was left out because of the budget
    # Hits the budget would also have held had `limit` not stopped the pack (first OMITTED_LISTED), and
    # the tokens of all of them: what the limit, not the budget or recall, left out.
    over_limit: tuple[Hit, ...] = ()
    over_limit_tokens: int = 0


def cheapest_matching(ranking: Ranking, *, tokens_of: Callable[[int], int]) -> int | None:
    """Seed §4's `minEntryTokens`: the cost of the cheapest matching entry, None when nothing hit.

    A budget below it packs nothing, and a budget of it packs at least that entry. Without floors
    every hit matches (seed packing: the cheapest hit). With them a hit below a floor is not a
    matching entry (pack_to_budget never packs it), so it must not set the cost an agent is told to
    raise its budget to: the cheapest hit that passes the floors.
    """
    floor = ranking.relevance
    if floor is None:
        return ranking.min_tokens
    every = ranking.every_hit()
    return None if every is None else floor.cheapest(every, tokens_of=tokens_of)


def pack_to_budget(
    hits: Iterable[Hit],
    *,
    tokens_of: Callable[[int], int],
    budget: int,
    min_tokens: int | None,
    limit: int | None = None,
    relevance: PackFloor | None = None,
) -> Pack:
    """Take hits in rank order, each whole or not at all; skip one that does not fit and try the next.

    `min_tokens` is the cheapest hit's cost: once the leftover budget is below it nothing else can
    fit, so the scan goes on only to name the matching hits the budget leaves out (`omitted`, the
    first OMITTED_LISTED; it used to stop at once, leaving out hits an agent had been told the price
    of). The pack is empty only when the budget is below the cheapest matching hit
    (cheapest_matching), or `limit` is 0. `limit` caps the number of packed entries without touching
    `truncated` (the budget did not leave them out); the scan goes on past it, as if there were no
    limit, to name in `over_limit` the hits the budget would also have held. With `relevance`, a hit
    below its floors is not a matching entry: it is neither packed nor omitted and never makes the
    pack `truncated`.
    """
    packed: list[Hit] = []
    omitted: list[Hit] = []
    over_limit: list[Hit] = []
    used = over_tokens = 0
    skips = 0
    truncated = False
    floor = min_tokens or 0
    ranked = hits.ranked() if isinstance(hits, Ranking) else ((hit.position, hit.score, hit.via) for hit in hits)
    for rank, (position, score, via) in enumerate(ranked):
        limited = limit is not None and len(packed) >= limit
        if relevance is not None:
            verdict = relevance.judge(position, score, via, first=rank == 0)
            if verdict is Verdict.STOP:
                break
            if verdict is Verdict.SKIP:
                continue
        cost = tokens_of(position)
        if used + over_tokens + cost <= budget:
            if not limited:
                packed.append(Hit(position, score, via))
                used += cost
                continue
            if len(over_limit) < OMITTED_LISTED:
                over_limit.append(Hit(position, score, via))
            over_tokens += cost
        elif not limited:
            truncated = True
            if len(omitted) < OMITTED_LISTED:
                omitted.append(Hit(position, score, via))
        if budget - used - over_tokens < floor and (limited or len(omitted) >= OMITTED_LISTED):
            break  # nothing else fits, and the hits left out for the budget are named (as many as are listed)
        if packed and (not limited or used + over_tokens + cost > budget):
            skips += 1
            if skips >= MAX_SKIPS:
                break
    return Pack(
        packed=tuple(packed),
        omitted=tuple(omitted),
        used_tokens=used,
        truncated=truncated,
        over_limit=tuple(over_limit),
        over_limit_tokens=over_tokens,
    )

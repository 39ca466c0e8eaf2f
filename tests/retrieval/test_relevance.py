"""Packs without filler (issue 11): relative and absolute relevance floors; truncated and omitted keep
their meaning; the seed's fill-the-budget packing stays available."""

from __future__ import annotations

import math

from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.packing import pack_to_budget
from knowledge.retrieval.ranking import Hit, Ranking
from knowledge.retrieval.relevance import RELATIVE_FLOOR, Verdict
from tests.retrieval.helpers import make_document

DOCUMENTS = [
    make_document("EG-001", "Zeppelin helium safety", body="Zeppelins carry helium. Helium does not burn."),
    make_document("EG-002", "Zeppelin history", body="The first zeppelin flew in 1900. Helium came later."),
    make_document("EG-003", "Airports", body="Helium balloons are sold at airports."),
    make_document("EG-004", "Ships", body="Ships carry cargo across oceans."),
]
INDEX = SearchIndex.compile(DOCUMENTS, options=SearchOptions(match_threshold=0.0))


def packed(ranking: Ranking, budget: int = 2000) -> tuple[list[str], list[str], bool]:
    result = pack_to_budget(
        ranking,
        tokens_of=lambda position: DOCUMENTS[position].tokens,
        budget=budget,
        min_tokens=ranking.min_tokens,
        relevance=ranking.relevance,
    )
    return (
        [DOCUMENTS[h.position].id for h in result.packed],
        [DOCUMENTS[h.position].id for h in result.omitted],
        result.truncated,
    )


def test_a_hit_far_below_the_best_one_is_not_packed_although_budget_is_left() -> None:
    ranking = INDEX.search("zeppelin helium safety")
    scores = {DOCUMENTS[h.position].id: h.score for h in ranking}

    ids, omitted, truncated = packed(ranking)

    assert ids[0] == "EG-001"
    assert all(scores[i] >= RELATIVE_FLOOR * scores["EG-001"] for i in ids)
    assert "EG-003" in scores and "EG-003" not in ids
    assert (omitted, truncated) == ([], False)


def test_the_seed_packing_fills_the_budget_in_rank_order() -> None:
    ranking = INDEX.search("zeppelin helium safety", options=SearchOptions(packing="seed", match_threshold=0.0))

    ids, _, _ = packed(ranking)

    assert ranking.relevance is None
    assert ids == [DOCUMENTS[h.position].id for h in ranking]


def test_a_relevant_entry_that_does_not_fit_still_truncates_the_pack() -> None:
    ranking = INDEX.search("zeppelin helium")
    first_cost = DOCUMENTS[next(iter(ranking)).position].tokens

    ids, omitted, truncated = packed(ranking, budget=first_cost)

    assert len(ids) == 1 and truncated is True and omitted


def test_the_best_hit_always_joins_and_a_linked_hit_is_judged_by_its_score() -> None:
    ranking = INDEX.search("zeppelin helium safety")
    floor = ranking.relevance
    assert floor is not None
    top = floor.top_score

    assert floor.verdict(Hit(position=3, score=top), first=True) is Verdict.KEEP
    assert floor.verdict(Hit(position=3, score=top * 0.9, via="EG-001"), first=False) is Verdict.KEEP
    assert floor.verdict(Hit(position=3, score=top * 0.9), first=False) is Verdict.SKIP  # shares no topic word
    assert floor.verdict(Hit(position=1, score=top * (RELATIVE_FLOOR / 2)), first=False) is Verdict.STOP


def test_a_gate_that_is_open_still_applies_the_floors() -> None:
    ranking = INDEX.search("zeppelin helium safety", options=SearchOptions(match_threshold=-math.inf))

    assert ranking.relevance is not None

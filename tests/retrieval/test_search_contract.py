"""The SearchIndex contract of seed §4: browse, match, fallback, category filter, determinism."""

from __future__ import annotations

import pytest

from knowledge.retrieval.index import SearchIndex, SearchOptions
from tests.retrieval.helpers import demo_documents, make_document

SEED = SearchOptions(ranker="seed")


@pytest.fixture(scope="module")
def demo_index() -> SearchIndex:
    return SearchIndex.compile(demo_documents())


def ids_of(index: SearchIndex, topic: str, **kwargs: object) -> list[str]:
    return [index.public_id(hit.position) for hit in index.search(topic, **kwargs)]  # type: ignore[arg-type]


@pytest.mark.parametrize("options", [None, SEED])
def test_seed_example_ranks_the_token_budget_rule_first(demo_index: SearchIndex, options: SearchOptions | None) -> None:
    ranking = demo_index.search("token 预算", options=options)

    assert ranking.mode == "match"
    assert ranking.matched is True
    assert ids_of(demo_index, "token 预算", options=options)[0] == "EG-202"


@pytest.mark.parametrize("options", [None, SEED])
def test_uncovered_topic_falls_back_to_three_most_confident_entries(
    demo_index: SearchIndex, options: SearchOptions | None
) -> None:
    ranking = demo_index.search("量子色动力学", options=options)
    hits = list(ranking)

    assert ranking.mode == "fallback"
    assert ranking.matched is False
    assert [demo_index.public_id(h.position) for h in hits] == [
        "EG-001",
        "EG-101",
        "EG-002",
    ]
    assert [h.score for h in hits] == [0.99, 0.99, 0.98]
    assert ranking.total == 3


def test_empty_topic_browses_every_entry_in_id_order(demo_index: SearchIndex) -> None:
    ranking = demo_index.search("   ")
    hits = list(ranking)

    assert (ranking.mode, ranking.matched, ranking.total) == ("browse", True, 15)
    assert [h.position for h in hits] == list(range(15))
    assert {h.score for h in hits} == {0.5}
    assert ranking.min_tokens == min(d.tokens for d in demo_documents())


def test_category_filter_applies_before_ranking(demo_index: SearchIndex) -> None:
    rules = ids_of(demo_index, "token 预算", category="rule")
    browse = ids_of(demo_index, "", category="rule")
    fallback = ids_of(demo_index, "量子色动力学", category="principle")

    assert rules[0] == "EG-202"
    assert set(rules) <= {"EG-201", "EG-202"}
    assert browse == ["EG-201", "EG-202"]
    assert fallback == ["EG-302", "EG-301", "EG-304"]


def test_expansion_never_crosses_the_category_filter(demo_index: SearchIndex) -> None:
    options = SearchOptions(expand=True)
    hits = list(demo_index.search("token 预算", category="rule", options=options))

    assert {demo_index.public_id(h.position)[:4] for h in hits} == {"EG-2"}


def test_unknown_category_yields_nothing(demo_index: SearchIndex) -> None:
    assert demo_index.search("token", category="nope").total == 0
    assert demo_index.search("", category="nope").total == 0


def test_expansion_brings_in_linked_entries_with_their_referrer() -> None:
    documents = [
        make_document("EG-001", "Alpha centauri", links=["EG-003"]),
        make_document("EG-002", "Beta"),
        make_document("EG-003", "Gamma"),
    ]
    index = SearchIndex.compile(documents)

    plain = list(index.search("alpha"))
    expanded = list(index.search("alpha", options=SearchOptions(expand=True)))

    assert [h.position for h in plain] == [0]
    assert [(h.position, h.via) for h in expanded] == [(0, None), (2, "EG-001")]
    assert expanded[1].score == pytest.approx(expanded[0].score * 0.5)


def test_ties_are_broken_by_position() -> None:
    documents = [make_document(f"EG-{n:03d}", "same words here") for n in range(1, 80)]
    index = SearchIndex.compile(documents)

    assert [h.position for h in index.search("same words")] == list(range(79))


def test_seed_ranker_computes_the_seed_formula_exactly() -> None:
    body = "budget " * 9
    document = make_document(
        "EG-202",
        "budget rules",
        summary="a budget",
        body=body,
        tags=["budget"],
        confidence=0.96,
    )
    index = SearchIndex.compile([document, make_document("EG-203", "other")])

    (hit,) = index.search("budget", options=SEED)

    # title 5 + tags 4 + summary 3 + body min(9, 6), times 0.85 + 0.96 × 0.15
    assert hit.score == (5 + 4 + 3 + 6) * (0.85 + 0.96 * 0.15)


def test_ids_match_exactly_and_full_width_forms_fold(demo_index: SearchIndex) -> None:
    assert ids_of(demo_index, "EG-202")[0] == "EG-202"
    assert ids_of(demo_index, "ＥＧ－２０２")[0] == "EG-202"
    assert ids_of(demo_index, "eg-202")[0] == "EG-202"


def test_min_tokens_is_the_cheapest_hit(demo_index: SearchIndex) -> None:
    ranking = demo_index.search("token 预算")
    costs = [demo_documents()[h.position].tokens for h in ranking]

    assert ranking.min_tokens == min(costs)
    assert ranking.total == len(costs)


def test_serialization_round_trips_byte_identically(demo_index: SearchIndex) -> None:
    data = demo_index.to_bytes()
    loaded = SearchIndex.from_bytes(data)

    assert loaded.to_bytes() == data
    assert SearchIndex.compile(demo_documents()).to_bytes() == data
    assert [(h.position, h.score) for h in loaded.search("token 预算")] == [
        (h.position, h.score) for h in demo_index.search("token 预算")
    ]
    assert b"pickle" not in data[:16]

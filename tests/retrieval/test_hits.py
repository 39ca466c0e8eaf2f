"""The query evaluation is exact: the same hits, scores, order, hit count and cheapest hit as a plain
dense evaluation of the postings (what the engine computed before the lazy hit set)."""

from __future__ import annotations

import math
import random
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.scoring import QueryPlan
from tests.retrieval.helpers import make_document

UNGATED = SearchOptions(match_threshold=-math.inf)
WORDS = ["wing", "flow", "heat", "预算", "规则", "token", "mach", "layer", "shock", "boundary", "budget", "流量"]


def reference_ranking(index: SearchIndex, plan: QueryPlan, ranker: str = "bm25f") -> list[tuple[int, float]]:
    """Every hit as (position, score), best first: float32 sums in plan order, times the confidence factor."""
    offsets, docs, impacts = index._offsets, index._docs, index._impacts[ranker]
    accumulator = np.zeros(index.count, dtype=np.float32)
    for term_id, weight in zip(plan.term_ids, plan.weights, strict=True):
        start, end = int(offsets[term_id]), int(offsets[term_id + 1])
        accumulator[docs[start:end]] += impacts[start:end].astype(np.float32) * np.float32(weight)
    positions = np.flatnonzero(accumulator)
    scores = accumulator[positions].astype(np.float64) * index._factor[positions]
    return sorted(zip(positions.tolist(), scores.tolist(), strict=True), key=lambda item: (-item[1], item[0]))


def corpus(size: int, seed: int) -> list[Document]:
    rng = random.Random(seed)
    documents = []
    for n in range(size):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
        title = rng.choice(WORDS) if rng.random() < 0.3 else ""
        documents.append(make_document(f"EG-{n:05d}", title, body=body, confidence=rng.choice([0.7, 0.85, 0.9, 1.0])))
    return documents


@pytest.fixture(scope="module")
def large_index() -> SearchIndex:
    return SearchIndex.compile(corpus(3000, seed=1))


@pytest.mark.parametrize("topic", ["wing", "wing flow heat", "预算 token token", "shock boundary layer mach", "流量"])
@pytest.mark.parametrize("ranker", ["bm25f", "seed"])
def test_hits_equal_the_dense_evaluation(large_index: SearchIndex, topic: str, ranker: str) -> None:
    options = SearchOptions(ranker=ranker, match_threshold=-math.inf)
    expected = reference_ranking(large_index, large_index.plan(topic, ranker), ranker)

    ranking = large_index.search(topic, options=options)

    assert [(hit.position, hit.score) for hit in ranking] == expected
    assert ranking.total == len(expected)
    assert ranking.min_tokens == min(large_index._tokens[p] for p, _ in expected)


def test_a_rare_term_takes_the_sorting_path_and_stays_exact() -> None:
    documents = [*corpus(2000, seed=2), make_document("EG-99999", "zeppelin", body="zeppelin wing")]
    index = SearchIndex.compile(documents)
    plan = index.plan("zeppelin", "bm25f")

    assert [(h.position, h.score) for h in index.search("zeppelin", options=UNGATED)] == reference_ranking(index, plan)


def test_the_category_filter_applies_to_hits_count_and_cheapest() -> None:
    documents = corpus(300, seed=3)
    documents = [
        make_document(d.id, d.title, body=d.body, category=("fact", "rule")[n % 2], confidence=d.confidence)
        for n, d in enumerate(documents)
    ]
    index = SearchIndex.compile(documents)
    everything = reference_ranking(index, index.plan("wing flow", "bm25f"))
    expected = [(p, s) for p, s in everything if documents[p].category == "rule"]

    ranking = index.search("wing flow", category="rule", options=UNGATED)

    assert [(h.position, h.score) for h in ranking] == expected
    assert ranking.total == len(expected)
    assert ranking.min_tokens == min(documents[p].tokens for p, _ in expected)


def test_a_partly_read_ranking_still_reports_the_whole_hit_set(large_index: SearchIndex) -> None:
    ranking = large_index.search("wing flow heat", options=UNGATED)
    first = [hit for hit, _ in zip(ranking, range(3), strict=False)]
    expected = reference_ranking(large_index, large_index.plan("wing flow heat", "bm25f"))

    assert [(h.position, h.score) for h in first] == expected[:3]
    assert ranking.total == len(expected)
    assert [(h.position, h.score) for h in ranking] == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), min_size=1, max_size=40), st.data())
def test_any_corpus_and_topic_rank_as_the_dense_evaluation(bodies: list[list[str]], data: st.DataObject) -> None:
    documents = [make_document(f"EG-{n:03d}", body=" ".join(b)) for n, b in enumerate(bodies, start=1)]
    index = SearchIndex.compile(documents)
    topic = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5)))

    ranking = index.search(topic, options=UNGATED)
    expected = reference_ranking(index, index.plan(topic, "bm25f"))

    if expected:
        assert [(h.position, h.score) for h in ranking] == expected
    else:
        assert ranking.mode == "fallback"


@pytest.mark.parametrize("topic", ["wing", "zeppelin"])  # hits on most entries (zeroed at once); on one
def test_the_accumulator_is_zero_after_a_query_whichever_way_it_is_cleared(topic: str) -> None:
    index = SearchIndex.compile([*corpus(600, seed=3), make_document("EG-99999", "zeppelin", body="zeppelin")])

    first = [(h.position, h.score) for h in index.search(topic, options=UNGATED)]

    assert first == reference_ranking(index, index.plan(topic, "bm25f"))
    assert not index._accumulators.get(index.count).any()
    assert [(h.position, h.score) for h in index.search(topic, options=UNGATED)] == first


def test_concurrent_threads_do_not_share_a_dirty_accumulator(large_index: SearchIndex) -> None:
    topics = ["wing", "flow heat", "预算 token", "mach layer", "shock"] * 8
    expected = {t: reference_ranking(large_index, large_index.plan(t, "bm25f")) for t in set(topics)}

    def run(topic: str) -> bool:
        return [(h.position, h.score) for h in large_index.search(topic, options=UNGATED)] == expected[topic]

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(run, topics))


def test_an_index_compiled_before_blocks_and_stored_minimums_still_serves(large_index: SearchIndex) -> None:
    older = SearchIndex.from_bytes(large_index.to_bytes())
    older = SearchIndex(
        older._meta, {k: v for k, v in older._arrays.items() if k not in ("post_blocks", "term_min_tokens")}
    )

    for topic in ("wing flow", "预算 token"):
        fresh, old = large_index.search(topic, options=UNGATED), older.search(topic, options=UNGATED)
        assert [(h.position, h.score) for h in old] == [(h.position, h.score) for h in fresh]
        assert (old.total, old.min_tokens) == (fresh.total, fresh.min_tokens)
        assert old.match_score is not None and old.match_score >= (fresh.match_score or 0) - 1e-12

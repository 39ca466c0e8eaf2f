"""Seed §4: an empty pack's hint, `minEntryTokens` and a retry at that budget agree with each other.

QA found `topic=evergreen&budget=220` answering minEntryTokens 214 and a hint that 220 is below 214:
the 214-token hit lies below the relevance floors, so it is never packed (docs/retrieval.md, *Packs
without filler*) and must not be the cost an agent is told to raise its budget to.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import BUDGET_MAX, clamp_budget
from knowledge.retrieval.payload import ContextQuery, ReleaseView, context_build
from knowledge.retrieval.ranking import SearchOptions
from knowledge.retrieval.relevance import BEST_SHARE
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import ReleaseStamp
from tests.retrieval.helpers import demo_namespace, demo_records
from tests.servingfixtures import clean_serving_state, demo

__all__ = ["clean_serving_state", "demo"]

STAMP = ReleaseStamp(sequence=7, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")
RELEVANT = SearchOptions()
CALIBRATED = SearchOptions(pack_best_share=BEST_SHARE)
SEED_PACKING = SearchOptions(packing="seed")
# The QA cases: (topic, budget, category, the cheapest entry that passes the floors, the cheapest hit).
QA_CASES = [("evergreen", 220, None, 226, 214), ("端点", 444, "protocol", 445, 253)]
BELOW_CHEAPEST = messages_for("zh-CN").hint_below_cheapest.split("{budget}")[1].split("{min_tokens}")[0]


@cache
def demo_index(options: SearchOptions) -> SearchIndex:
    return SearchIndex.compile([e.as_document() for e in demo_records()], options=options)


def build(topic: str, budget: int, category: str | None = None, options: SearchOptions = RELEVANT) -> dict[str, Any]:
    view = ReleaseView(release_id=7, namespace=demo_namespace(), stamp=STAMP, entries=demo_records())
    query = ContextQuery(topic, clamp_budget(budget), category)
    return context_build(index=demo_index(options), view=view, query=query)


def says_below_cheapest(body: dict[str, Any]) -> bool:
    return body["hint"] is not None and BELOW_CHEAPEST in body["hint"]


@pytest.mark.parametrize(("topic", "budget", "category", "cheapest", "_"), QA_CASES)
def test_an_empty_pack_reports_the_cheapest_entry_it_could_have_packed(
    topic: str, budget: int, category: str | None, cheapest: int, _: int
) -> None:
    body = build(topic, budget, category)

    assert (body["entryCount"], body["matched"], body["truncated"]) == (0, True, True)
    assert body["minEntryTokens"] == cheapest == min(item["tokens"] for item in body["omitted"])
    assert budget < body["minEntryTokens"]
    assert f"budget={budget} 低于命中条目中最便宜一条的成本（{cheapest} token）" in body["hint"]


@pytest.mark.parametrize(("topic", "budget", "category", "cheapest", "_"), QA_CASES)
def test_a_retry_at_min_entry_tokens_packs_an_entry(
    topic: str, budget: int, category: str | None, cheapest: int, _: int
) -> None:
    retry = build(topic, build(topic, budget, category)["minEntryTokens"], category)

    assert retry["entryCount"] >= 1
    assert retry["usedTokens"] == cheapest
    assert not says_below_cheapest(retry)


@pytest.mark.parametrize(("topic", "budget", "category", "_", "cheapest_hit"), QA_CASES)
def test_seed_packing_still_reports_the_cheapest_hit(
    topic: str, budget: int, category: str | None, _: int, cheapest_hit: int
) -> None:
    body = build(topic, budget, category, SEED_PACKING)

    ranking = demo_index(SEED_PACKING).search(topic, category=category)
    assert body["minEntryTokens"] == cheapest_hit == ranking.min_tokens
    assert body["entryCount"] >= 1  # no floor: the cheapest hit fits the budget


VOCABULARY = sorted(
    {tag for entry in demo_records() for tag in entry.tags}
    | {word for entry in demo_records() for word in entry.title.split()}
    | {"evergreen", "端点", "token", "预算", "协议", "引用", "置信度", "量子色动力学"}
)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3),
    budget=st.integers(min_value=200, max_value=1200),
    category=st.sampled_from([None, "fact", "protocol", "rule", "principle", "workflow"]),
    options=st.sampled_from([RELEVANT, CALIBRATED, SEED_PACKING]),
)
def test_min_entry_tokens_is_where_packs_start(
    words: list[str], budget: int, category: str | None, options: SearchOptions
) -> None:
    body = build(" ".join(words), budget, category, options)
    cheapest = body["minEntryTokens"]

    if says_below_cheapest(body):
        assert body["entryCount"] == 0 and body["budget"] < cheapest
    if cheapest is None:
        return
    assert (body["entryCount"] == 0) == (body["budget"] < cheapest)
    if cheapest <= BUDGET_MAX:
        assert build(" ".join(words), cheapest, category, options)["entryCount"] >= 1


@pytest.mark.django_db
@pytest.mark.parametrize(("topic", "budget", "category"), [(t, b, c) for t, b, c, _, _ in QA_CASES])
def test_the_demo_release_never_says_a_budget_is_below_a_smaller_cost(
    client: Any, demo: Any, topic: str, budget: int, category: str | None
) -> None:
    params = {"topic": topic, "budget": budget} | ({"category": category} if category else {})
    body = orjson.loads(client.get("/api/context", params).content)

    if body["entryCount"] == 0:
        assert budget < body["minEntryTokens"]
        assert f"（{body['minEntryTokens']} token）" in body["hint"]
    if says_below_cheapest(body):
        assert budget < body["minEntryTokens"]
    retry = orjson.loads(client.get("/api/context", params | {"budget": body["minEntryTokens"]}).content)
    assert retry["entryCount"] >= 1

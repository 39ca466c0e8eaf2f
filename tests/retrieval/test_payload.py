"""The /api/context payload of seed §4, built without Django: fields, hints, relevance, determinism."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.contract.shapes import is_stale
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.payload import (
    ContextQuery,
    ReleaseView,
    context_build,
    suggested_budget,
)
from knowledge.retrieval.ranking import SearchOptions
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo, ReleaseStamp, without_dead_links
from tests.retrieval.helpers import demo_namespace, demo_records

SEED_FIELDS = [
    "query",
    "knowledgeVersion",
    "revision",
    "usedTokens",
    "budget",
    "matched",
    "truncated",
    "entryCount",
    "minEntryTokens",
    "hint",
    "entries",
    "citations",
    "rules",
    "generatedAt",
    "source",
]
ADDITIVE_FIELDS = ["releaseId", "hitCount", "omitted", "budgetMode", "payloadTokens"]
ENTRY_FIELDS = [
    "id",
    "category",
    "title",
    "summary",
    "body",
    "tags",
    "confidence",
    "tokens",
    "updated",
    "score",
    "relevance",
]
ENTRY_ADDITIVE = [
    "version",
    "contentHash",
    "approvedAt",
    "reviewState",
    "sensitivity",
    "reviewBy",
    "validUntil",
    "stale",
    "url",
]
STAMP = ReleaseStamp(sequence=7, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")


def namespace(language: str = "zh-CN") -> NamespaceInfo:
    return demo_namespace(language=language)


def demo_entries() -> tuple[EntryRecord, ...]:
    return demo_records()


def build(
    topic: str = "",
    budget: int = 2000,
    category: str | None = None,
    *,
    language: str = "zh-CN",
    options: SearchOptions | None = None,
    entries: tuple[EntryRecord, ...] | None = None,
) -> dict:
    entries = entries or demo_entries()
    index = SearchIndex.compile([e.as_document() for e in entries], options=options)
    view = ReleaseView(release_id=7, namespace=namespace(language), stamp=STAMP, entries=entries)
    return context_build(index=index, view=view, query=ContextQuery(topic, budget, category))


def test_it_has_the_seed_fields_in_order_then_the_documented_additions() -> None:
    body = build("token 预算")

    assert list(body) == SEED_FIELDS + ADDITIVE_FIELDS
    assert list(body["query"]) == ["topic", "budget", "category"]
    assert list(body["entries"][0]) == ENTRY_FIELDS + ENTRY_ADDITIVE
    assert list(body["citations"][0]) == ["marker", "entryId", "url", "text", "confidence"]
    assert body["source"] == "api/context"
    assert body["generatedAt"] == STAMP.generated_at
    assert body["query"]["category"] is None


def test_citations_match_entries_one_to_one() -> None:
    body = build("token 预算")

    assert [c["entryId"] for c in body["citations"]] == [e["id"] for e in body["entries"]]
    first = body["citations"][0]
    assert first["marker"] == f"[{first['entryId']}]"
    assert first["text"] == f"来源：Evergreen {first['entryId']} — {body['entries'][0]['title']}"
    assert first["url"] == f"https://evergreen.example.com/context.json#{first['entryId']}"


def test_an_empty_topic_browses_by_id_with_score_half() -> None:
    body = build("", 8000)

    assert body["matched"] is True
    assert body["hint"] is None
    assert [e["id"] for e in body["entries"]] == sorted(e.id for e in demo_entries())
    assert {e["score"] for e in body["entries"]} == {0.5}
    assert {e["relevance"] for e in body["entries"]} == {1.0}


def test_a_zero_hit_topic_falls_back_unmatched_with_a_hint_not_to_cite() -> None:
    body = build("量子色动力学")

    assert body["matched"] is False
    assert body["entries"], "the fallback still returns entries"
    assert "兜底" in body["hint"] and "Evergreen 知识库中无此条目" in body["hint"]
    top = body["entries"][0]["confidence"]
    assert all(e["relevance"] == 1 for e in body["entries"] if e["confidence"] == top)


def test_a_zero_hit_fallback_reports_no_hits_not_the_fallback_entries() -> None:
    body = build("量子色动力学")

    assert body["entryCount"] == len(body["entries"]) > 0
    assert body["hitCount"] == 0
    assert body["minEntryTokens"] is None


def test_weak_hits_report_the_hits_they_are() -> None:
    body = build("token 天气预报")

    assert body["hitCount"] == len(body["entries"]) > 0
    assert body["minEntryTokens"] == min(e["tokens"] for e in body["entries"])


def test_a_topic_hit_but_not_covered_returns_weak_hits_unmatched() -> None:
    body = build("token 天气预报")

    assert body["matched"] is False
    assert body["entries"][0]["id"] == "EG-202", "weak hits come in rank order, not by confidence"
    assert len(body["entries"]) <= 3
    assert "弱命中" in body["hint"] and "Evergreen 知识库中无此条目" in body["hint"]


SEED_PACKING = SearchOptions(packing="seed")


def test_hints_follow_the_namespace_language() -> None:
    assert "fallback" in build("quantum chromodynamics zzzqqq", language="en")["hint"]
    assert "预算不足" in build("token 预算", 800, options=SEED_PACKING)["hint"]
    assert "Raise the budget" in build("token 预算", 800, language="en", options=SEED_PACKING)["hint"]


def test_truncated_hint_suggests_the_next_budget_tier() -> None:
    body = build("token 预算", 2000, options=SEED_PACKING)

    assert body["truncated"] is True
    assert "4000" in body["hint"]
    assert body["usedTokens"] <= 2000
    leftover = 2000 - body["usedTokens"]
    assert all(item["tokens"] > leftover for item in body["omitted"])


def test_a_budget_below_the_cheapest_hit_packs_nothing_and_says_how_much_is_needed() -> None:
    big = replace(demo_entries()[0], id="EG-901", title="Zeppelin", summary="zeppelin", body="飞艇" * 300, tokens=650)
    body = build("zeppelin", 200, entries=(*demo_entries(), big))

    assert (body["entryCount"], body["entries"], body["usedTokens"]) == (0, [], 0)
    assert body["minEntryTokens"] == 650
    assert body["truncated"] is True
    assert "650" in body["hint"] and "800" in body["hint"]


def test_relevance_is_score_over_the_top_score_rounded() -> None:
    body = build("token 预算")
    top = body["entries"][0]

    assert top["relevance"] == 1
    for entry in body["entries"]:
        assert 0 < entry["relevance"] <= 1
        assert entry["relevance"] == pytest.approx(max(0.01, round(entry["score"] / top["score"], 2)), abs=0.011)


def test_category_filter_keeps_only_that_category() -> None:
    body = build("", 800, "rule")

    assert {e["category"] for e in body["entries"]} == {"rule"}
    assert body["query"]["category"] == "rule"


def test_seed_ranker_scores_with_the_seed_formula() -> None:
    entry = replace(
        demo_entries()[0],
        id="EG-900",
        title="Beta plans",
        summary="Beta plans a zeppelin launch.",
        body="The zeppelin zeppelin launches.",
        tags=("zeppelin",),
        confidence=0.95,
    )
    body = build("zeppelin", entries=(*demo_entries(), entry), options=SearchOptions(ranker="seed"))

    # tags x4 + summary x3 + body x min(2, 6) = 9, times 0.85 + 0.95 x 0.15
    assert body["entries"][0]["id"] == "EG-900"
    assert body["entries"][0]["score"] == round(9 * (0.85 + 0.95 * 0.15), 3)


def test_same_request_same_bytes() -> None:
    assert orjson.dumps(build("token 预算")) == orjson.dumps(build("token 预算"))


def test_stale_means_older_than_twelve_months_before_the_revision() -> None:
    assert is_stale("2025-09-01", revision="2026-09-02") is True
    assert is_stale("2025-09-02", revision="2026-09-02") is False
    assert is_stale("2023-02-28", revision="2024-02-29") is False


def test_suggested_budget_picks_the_next_tier() -> None:
    assert [suggested_budget(t) for t in (178, 801, 2001, 7999, 8300)] == [800, 2000, 4000, 8000, 8300]


def test_link_expansion_marks_entries_it_brought_in_with_via() -> None:
    body = build("token 预算", 8000, "rule", options=SearchOptions(expand=True))
    plain = build("token 预算", 8000, options=SearchOptions(expand=True))

    assert {e["category"] for e in body["entries"]} == {"rule"}  # expansion never crosses the category filter
    expanded = [e for e in plain["entries"] if "via" in e]
    assert expanded, "some linked entry joins through expansion"
    ids = {e["id"] for e in plain["entries"]}
    assert all(e["via"] in ids for e in expanded)
    assert list(expanded[0]) == ENTRY_FIELDS + ENTRY_ADDITIVE + ["via"]


@cache
def demo_index() -> SearchIndex:
    return SearchIndex.compile([e.as_document() for e in demo_entries()])


@settings(max_examples=300, deadline=None)
@given(
    topic=st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=60),
    budget=st.integers(min_value=200, max_value=8000),
    category=st.sampled_from([None, "fact", "rule", "workflow"]),
)
def test_any_topic_packs_within_budget_deterministically(topic: str, budget: int, category: str | None) -> None:
    view = ReleaseView(release_id=7, namespace=namespace(), stamp=STAMP, entries=demo_entries())
    query = ContextQuery(topic.strip(), budget, category)
    first = orjson.dumps(context_build(index=demo_index(), view=view, query=query))
    body = orjson.loads(first)

    assert first == orjson.dumps(context_build(index=demo_index(), view=view, query=query))
    assert body["usedTokens"] == sum(e["tokens"] for e in body["entries"]) <= budget
    assert body["entryCount"] == len(body["entries"]) == len(body["citations"])
    assert body["matched"] or body["hint"]
    if category:
        assert {e["category"] for e in body["entries"]} <= {category}


def test_links_to_entries_outside_the_release_are_dropped() -> None:
    first, second, *rest = demo_records()
    entries = (replace(first, links=(second.id, "EG-998", "EG-999")), second, *rest)

    kept = without_dead_links(entries)

    assert kept[0].links == (second.id,)
    assert kept[1:] == entries[1:]

"""Synonym sets expand topics at query time (one-way, two-way, across languages); aliases are searched
like the title and count in every passage."""

from __future__ import annotations

import math

from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.synonyms import SynonymSet, find_synonyms, synonym_rules
from tests.retrieval.helpers import make_document

UNGATED = SearchOptions(match_threshold=-math.inf)
BUDGET_RULE = make_document("EG-202", "Token 预算纪律", body="按任务选预算档位；截断时提高预算重试。")
PROTOCOL = make_document("EG-102", "MCP 工具签名", body="Model Context Protocol 服务提供四个工具。")
OTHER = make_document("EG-301", "信噪比优先", body="上下文不是越多越好。")


def ids(index: SearchIndex, topic: str) -> list[str]:
    return [index.public_id(hit.position) for hit in index.search(topic, options=UNGATED)]


def test_a_two_way_set_finds_a_chinese_entry_for_an_english_phrase_and_back() -> None:
    sets = [SynonymSet(("token budget", "Token 预算"))]
    index = SearchIndex.compile([PROTOCOL, BUDGET_RULE, OTHER], synonyms=sets)
    plain = SearchIndex.compile([PROTOCOL, BUDGET_RULE, OTHER])

    assert ids(index, "how to choose a token budget")[0] == "EG-202"
    coverage = index.search("token budget", options=UNGATED).coverage
    assert coverage is not None and coverage.entry == 1.0  # 预算 stands for "budget"
    assert plain.search("token budget", options=UNGATED).coverage.entry < 1.0  # type: ignore[union-attr]


def test_a_one_way_set_expands_only_its_first_phrase() -> None:
    rules = synonym_rules([SynonymSet(("MCP", "Model Context Protocol"), two_way=False)], AnalyzerConfig())

    assert list(rules) == [("mcp",)]
    assert rules[("mcp",)] == (("model", "context", "protocol"),)


def test_longest_source_phrase_wins_and_matches_do_not_overlap() -> None:
    rules = synonym_rules([SynonymSet(("token budget", "预算")), SynonymSet(("budget", "预算额度"))], AnalyzerConfig())
    matches = find_synonyms(["token", "budget", "budget"], rules)

    assert [(m.start, m.end) for m in matches] == [(0, 2), (2, 3)]


def test_synonyms_travel_in_the_index_bytes() -> None:
    index = SearchIndex.compile([PROTOCOL, BUDGET_RULE], synonyms=[SynonymSet(("MCP", "Model Context Protocol"))])

    assert SearchIndex.from_bytes(index.to_bytes()).synonyms == index.synonyms


def test_an_alias_finds_its_entry_in_another_language_and_covers_the_topic() -> None:
    aliased = make_document(
        "EG-202", "Token 预算纪律", body="按任务选预算档位。", aliases=["Token budget discipline", "choosing a budget"]
    )
    index = SearchIndex.compile([PROTOCOL, aliased, OTHER])

    ranking = index.search("token budget discipline", options=UNGATED)

    assert index.public_id(next(iter(ranking)).position) == "EG-202"
    assert ranking.coverage is not None and ranking.coverage.passage == 1.0  # aliases are in every passage


def test_an_alias_is_an_exact_key_like_a_tag() -> None:
    aliased = make_document("EG-402", "把网站改造成 Evergreen", body="迁移步骤。", aliases=["migration guide"])
    index = SearchIndex.compile([PROTOCOL, aliased, OTHER])

    assert ids(index, "Migration Guide")[0] == "EG-402"

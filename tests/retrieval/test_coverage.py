"""`matched` means covered (issue 5): passage coverage, compound pieces, clitics, and weak hits."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text, split_sentences
from knowledge.retrieval.index import (
    COVERAGE_KNEE,
    COVERAGE_SLOPE,
    DEFAULT_MATCH_THRESHOLD,
    LEAD_CAP,
    LEAD_WEIGHT,
    MATCH_COVERAGE_FLOOR,
    NUMBER_PENALTY,
    RAREST_BONUS,
    UNKNOWN_PENALTY,
    WEAK_SIZE,
    SearchIndex,
    SearchOptions,
    gate_score_of,
)
from knowledge.retrieval.scoring import Coverage, holds_rarest, numbers_lacking
from tests.retrieval.helpers import demo_documents, make_document

CONFIG = AnalyzerConfig()
UNGATED = SearchOptions(match_threshold=-math.inf)


@pytest.fixture(scope="module")
def demo_index() -> SearchIndex:
    return SearchIndex.compile(demo_documents())


def test_words_that_meet_in_one_sentence_cover_more_than_scattered_ones() -> None:
    together = make_document("EG-001", "Notes", body="Zeppelins carry helium safely. Other text follows here.")
    scattered = make_document("EG-002", "Notes", body="Zeppelins fly. Much later, something else carries helium.")
    index = SearchIndex.compile([together, scattered])

    assert index.coverage("zeppelins helium", 0).passage == pytest.approx(1.0)
    assert index.coverage("zeppelins helium", 1).passage < 0.75
    assert index.coverage("zeppelins helium", 1).entry == pytest.approx(1.0)  # both words are in it


def test_title_and_tags_count_in_every_sentence() -> None:
    document = make_document("EG-001", "Zeppelin", tags=["airship"], body="It carries helium. It is slow.")
    index = SearchIndex.compile([document, make_document("EG-002", "Other")])

    assert index.coverage("zeppelin airship helium", 0).passage == pytest.approx(1.0)


def test_a_question_compound_matches_the_words_entries_split_it_into() -> None:
    station = make_document("EG-001", "北土城站", body="该站于2008年投入了使用。车站位于北京。")
    other = make_document("EG-002", "其他车站", body="这里没有相关的内容。")
    index = SearchIndex.compile([station, other])

    assert analyze_text("投入使用", CONFIG) == ["投入使用"]  # one word in the question...
    ranking = index.search("北土城站什么时候投入使用？")

    assert ranking.matched is True
    assert next(hit.position for hit in ranking) == 0
    assert index.coverage("投入使用", 0).passage == pytest.approx(1.0)  # ...found as 投入 + 使用


def test_english_clitics_are_not_terms() -> None:
    assert analyze_text("What's Evergreen's budget? It isn't set.", CONFIG) == ["evergreen", "budget", "set"]


@given(st.lists(st.sampled_from(["预算", "规则。", "token", " budget.", "！", "EG-202", "；", "\n", " heat", "流量"])))
def test_sentences_hold_exactly_the_terms_of_the_text(parts: list[str]) -> None:
    text = "".join(parts)

    by_sentence = [term for sentence in split_sentences(text) for term in analyze_text(sentence, CONFIG)]

    assert by_sentence == analyze_text(text, CONFIG)


def test_a_topic_with_hits_but_no_coverage_gets_the_best_hits_unmatched(demo_index: SearchIndex) -> None:
    topic = "红烧肉怎么做才不油腻？"
    ungated = [hit.position for hit in demo_index.search(topic, options=UNGATED)]

    ranking = demo_index.search(topic)
    hits = list(ranking)

    assert (ranking.mode, ranking.matched) == ("weak", False)
    assert ranking.match_score is not None and ranking.match_score < DEFAULT_MATCH_THRESHOLD
    # The best hits in rank order, less those below the relevance floors (never filler).
    assert [hit.position for hit in hits] == [p for p in ungated[:WEAK_SIZE] if p in {h.position for h in hits}]
    assert hits[0].position == ungated[0]
    assert ranking.total == len(hits) <= WEAK_SIZE
    assert ranking.min_tokens == min(demo_documents()[hit.position].tokens for hit in hits)


def test_a_zero_hit_topic_still_gets_the_confidence_fallback(demo_index: SearchIndex) -> None:
    ranking = demo_index.search("量子色动力学")

    assert (ranking.mode, ranking.matched, ranking.match_score) == ("fallback", False, None)


def test_the_seed_keyword_examples_still_match(demo_index: SearchIndex) -> None:
    for topic in ("token 预算", "MCP tools", "Prompt Pack 有哪些场景？", "EG-202"):
        assert demo_index.search(topic).matched is True, topic


def test_weak_hits_respect_the_category_filter(demo_index: SearchIndex) -> None:
    ranking = demo_index.search("红烧肉怎么做才不油腻？", category="principle")

    assert not ranking.matched
    assert {demo_documents()[hit.position].category for hit in ranking} <= {"principle"}


def test_a_namespace_threshold_decides_between_match_and_weak(demo_index: SearchIndex) -> None:
    topic = "token 预算怎么选？"
    score = demo_index.search(topic).gate_score
    assert score is not None and score > 0

    assert demo_index.search(topic, options=SearchOptions(match_threshold=score)).matched is True
    assert demo_index.search(topic, options=SearchOptions(match_threshold=score + 1e-9)).matched is False


@pytest.mark.parametrize(
    "topic", ["红烧肉的家常做法", "红烧肉怎么做才不油腻？", "Give me a pancake recipe with blueberries"]
)
def test_a_topic_mostly_absent_from_the_best_entry_is_never_matched(demo_index: SearchIndex, topic: str) -> None:
    ranking = demo_index.search(topic, options=SearchOptions(match_threshold=0.0))

    assert ranking.matched is False
    # Refused by the coverage penalty at any threshold (every threshold is >= 0), not by a cliff.
    assert ranking.gate_score is None or ranking.gate_score < 0


LARGEST_MATCH_BONUS = LEAD_WEIGHT * math.log(LEAD_CAP) + RAREST_BONUS


@given(coverage=st.floats(0.0, 1.0), gained=st.floats(0.0, 0.05), score=st.floats(-1.0, 2.0))
def test_coverage_moves_the_gate_score_smoothly(coverage: float, gained: float, score: float) -> None:
    # No cliff: a small change in coverage (one more entry moves every idf) moves the gate score by
    # at most COVERAGE_SLOPE times as much, wherever a threshold >= 0 could be.
    before = gate_score_of(score, Coverage(passage=0.0, entry=coverage))
    after = gate_score_of(score, Coverage(passage=0.0, entry=min(1.0, coverage + gained)))
    assert after >= before
    if math.isfinite(before):
        assert after - before <= COVERAGE_SLOPE * gained + 1e-9


@given(entry=st.floats(0.0, 1.0), share=st.floats(0.0, 1.0), unknown=st.floats(0.0, 1.0))
def test_a_topic_the_best_entry_mostly_lacks_scores_below_every_threshold(
    entry: float, share: float, unknown: float
) -> None:
    # The largest match score an entry holding `entry` of the topic can get: its best passage holds
    # at most that, the lead is capped, the rarest word is in it.
    best = entry * share + LARGEST_MATCH_BONUS - UNKNOWN_PENALTY * unknown
    gate = gate_score_of(best, Coverage(passage=entry * share, entry=entry))
    if entry < MATCH_COVERAGE_FLOOR:
        assert gate == -math.inf
    if entry < MATCH_COVERAGE_FLOOR + 1e-3:
        assert gate < 0.01  # the refusal below the floor is not a cliff: the score is already ~0 there
    if entry >= COVERAGE_KNEE:
        assert gate == best  # a topic the entry mostly holds pays nothing
    assert MATCH_COVERAGE_FLOOR > 0.25  # three quarters of the topic absent: never matched


def test_an_unknown_english_word_ranks_the_identifiers_that_begin_with_it() -> None:
    slugify = make_document("PY-001", "django.utils.text.slugify", body="Convert spaces or dashes to single dashes.")
    other = make_document("PY-002", "django.utils.text.wrap", body="A word-wrap function for a title.")
    index = SearchIndex.compile([slugify, other])

    hits = list(index.search("make a slug from a title", options=UNGATED))

    assert hits[0].position == 0


def test_words_no_entry_contains_lower_the_match_score_beyond_their_coverage() -> None:
    # The same entry covers both topics' known words in one passage and leads alike; the second topic
    # adds a word the knowledge base never uses. Coverage already counts it as uncovered; the match
    # score also loses UNKNOWN_PENALTY x its share of the topic's weight.
    documents = [
        make_document("TZ-001", "Time zones", body="Convert an aware datetime to another time zone with astimezone."),
        make_document("TZ-002", "Dates", body="Parse a date string into a date object."),
    ]
    index = SearchIndex.compile(documents)
    plain = index.search("convert datetime time zone", options=UNGATED)
    foreign = index.search("convert datetime time zone tokyo", options=UNGATED)
    assert plain.coverage is not None and foreign.coverage is not None
    assert plain.match_score is not None and foreign.match_score is not None

    plan = index.plan("convert datetime time zone tokyo")
    unknown = plan.unknown_idf / plan.coverage_total
    assert unknown > 0
    lost_to_coverage = plain.coverage.passage - foreign.coverage.passage
    assert plain.match_score - foreign.match_score == pytest.approx(lost_to_coverage + UNKNOWN_PENALTY * unknown)


def test_the_match_score_rewards_a_best_entry_holding_the_topics_rarest_word() -> None:
    # `blimp` is in one entry only, `helium` in three: the topic is about blimps.
    documents = [
        make_document("AB-001", "Blimps", body="A blimp floats on helium."),
        make_document("AB-002", "Balloons", body="Party balloons hold helium, a light gas, and float."),
        make_document("AB-003", "Gases", body="Helium is a light gas. Helium floats."),
        make_document("AB-004", "Ships", body="Ships float on water."),
    ]
    index = SearchIndex.compile(documents)
    plan = index.plan("blimp helium")
    arrays = {"offsets": index._offsets, "docs": index._docs}  # the postings the search reads

    assert holds_rarest(plan, 0, **arrays) is True
    assert holds_rarest(plan, 1, **arrays) is False and holds_rarest(plan, 2, **arrays) is False
    assert holds_rarest(index.plan("the and of"), 0, **arrays) is False  # no informative word at all

    # The best entry for the second topic is about helium as a light gas; only the ships float on water.
    for topic, rarest in (("blimp helium", True), ("helium light gas water", False)):
        ranking = index.search(topic, options=UNGATED)
        scores = [hit.score for hit in ranking]
        best = next(iter(ranking)).position
        assert holds_rarest(index.plan(topic), best, **arrays) is rarest
        assert ranking.coverage is not None and ranking.match_score is not None
        lead = LEAD_WEIGHT * math.log(min(scores[0] / scores[1], LEAD_CAP))
        expected = ranking.coverage.passage + lead + (RAREST_BONUS if rarest else 0.0)
        assert ranking.match_score == pytest.approx(expected)


def test_the_match_score_falls_when_the_best_entry_lacks_the_topics_numbers() -> None:
    # CMRC's uncovered "上海轨道交通16号线…" found line 17's article: every word but the number.
    documents = [
        make_document("AB-001", "Metro line 17", body="Line 17 of the metro opened in 2018 and runs west."),
        make_document("AB-002", "Bus routes", body="Buses run along the river every day."),
    ]
    index = SearchIndex.compile(documents)
    arrays = {"offsets": index._offsets, "docs": index._docs}

    assert numbers_lacking(index.plan("when did metro line 17 open"), 0, **arrays) == 0.0
    assert numbers_lacking(index.plan("metro line 2018 17"), 1, **arrays) == 1.0
    assert numbers_lacking(index.plan("when did metro line 16 open"), 0, **arrays) == 1.0  # 16: in no entry
    assert numbers_lacking(index.plan("metro line 17 or 16"), 0, **arrays) == 0.5
    assert numbers_lacking(index.plan("when did the metro open"), 0, **arrays) == 0.0  # no number asked

    named, other = (index.search(topic, options=UNGATED) for topic in ("metro line 17 open", "metro line 16 open"))
    assert named.match_score is not None and other.match_score is not None
    assert next(iter(other)).position == 0  # the same best entry...
    lost_to_coverage = named.coverage.passage - other.coverage.passage  # type: ignore[union-attr]
    unknown = index.plan("metro line 16 open")
    unknown_share = unknown.unknown_idf / unknown.coverage_total
    # ...but 16 is missing from it: the score falls by the penalty on top of what coverage lost.
    assert named.match_score - other.match_score == pytest.approx(
        lost_to_coverage + UNKNOWN_PENALTY * unknown_share + NUMBER_PENALTY
    )

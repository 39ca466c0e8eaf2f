"""The cache miss's faster code gives what the plain version it replaced gives (issue 18: byte-identical answers)."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote_to_bytes

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.errors import BadParameterError
from gateway.params import _control, context_query_from_bytes, context_query_from_string, query_bytes_check
from knowledge.retrieval import feedback
from knowledge.retrieval.analysis import AnalyzerConfig, _stem_word, analyze_text, split_words
from knowledge.retrieval.feedback import ForwardIndex, _among, expanded_plan
from knowledge.retrieval.hits import Accumulators, QueryHits
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.payload import ContextQuery, ReleaseView, context_pack, context_payload
from knowledge.retrieval.postings import ALL_BLOCKS
from knowledge.retrieval.ranking import ArrayHits, Ranking
from knowledge.retrieval.scoring import QueryPlan, _block_bits, _covered_weight, _term_masks
from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp
from knowledge.retrieval.stopwords import is_function_word, is_stopword
from knowledge.retrieval.tokens import cjk_characters, cjk_characters_utf8
from knowledge.retrieval.vocabulary import Vocabulary
from tests.retrieval.helpers import demo_namespace, demo_records

# The estimator's characters, counted one match per character as before (seed §4).
_CJK_ONE = re.compile(r"[\u3000-\u303F\u3400-\u9FFF\uF900-\uFAFF\uFF00-\uFFEF]")
STAMP = ReleaseStamp(sequence=7, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")
TEXT = st.text(
    st.sampled_from('ab 1.-{}"预算规则。，　ＥＧ－\u303f\u3400\u9fff\uf900\ufaff\uff00\uffef\u2014é\U00020000')
)


@given(TEXT)
def test_cjk_count_by_runs_equals_one_match_per_character(text: str) -> None:
    assert cjk_characters(text) == len(_CJK_ONE.findall(text))


def test_control_characters_are_unicode_category_cc() -> None:
    every = (chr(code) for code in range(sys.maxunicode + 1))
    assert [c for c in every if _control(c)] == [
        chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cc"
    ]
    assert not _control("预算 token\u00a0x") and _control("a\u0085")


@given(st.lists(st.text("abcé预", max_size=4), max_size=40), st.lists(st.text("abcé预x", max_size=4), max_size=60))
def test_remembered_lookups_equal_the_binary_search(terms: list[str], asked: list[str]) -> None:
    vocabulary, _ = Vocabulary.build(list(dict.fromkeys(terms)))
    for term in asked + asked:
        assert vocabulary.lookup(term) == vocabulary._searched(term)


LENGTHS = st.lists(st.integers(min_value=0, max_value=400), max_size=6)


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=0, max_value=6), max_size=300), LENGTHS, st.booleans())
def test_prefixes_are_the_full_sort_as_long_as_the_longest_asked(raw: list[int], lengths: list[int], via: bool) -> None:
    scores = np.array(raw, dtype=np.float64)
    positions = np.arange(len(raw), dtype=np.int64)[::-1].copy()
    vias = np.arange(len(raw), dtype=np.int64) % 3 - 1 if via else None
    hits = ArrayHits(positions, scores, np.ones(len(raw), dtype=np.int32), via=vias)
    order = sorted(range(len(raw)), key=lambda i: (-scores[i], positions[i]))
    longest = 0
    for length in lengths:
        longest = max(longest, min(length, len(raw)))
        prefix = hits.prefix(length)

        assert prefix.positions.tolist() == [int(positions[i]) for i in order[:longest]]
        assert prefix.scores.tolist() == [float(scores[i]) for i in order[:longest]]
        assert prefix.complete == (longest == len(raw))
        if vias is not None:
            assert prefix.via is not None and prefix.via.tolist() == [int(vias[i]) for i in order[:longest]]


@settings(max_examples=100)
@given(st.lists(st.integers(min_value=0, max_value=4), max_size=700))
def test_iterating_a_ranking_yields_every_hit_in_full_sort_order(raw: list[int]) -> None:
    scores = np.array(raw, dtype=np.float64) / 3
    positions = np.arange(len(raw), dtype=np.int64)
    via = np.where(positions % 2 == 0, -1, positions // 2)
    ranking = Ranking(
        mode="match",
        matched=True,
        hits=ArrayHits(positions, scores, np.ones(len(raw), dtype=np.int32), via=via),
        public_id=lambda position: f"EG-{position}",
    )
    order = sorted(range(len(raw)), key=lambda i: (-scores[i], positions[i]))

    hits = list(ranking)

    assert [(h.position, h.score, h.via) for h in hits] == [
        (i, float(scores[i]), None if via[i] < 0 else f"EG-{via[i]}") for i in order
    ]
    assert all(type(h.position) is int and type(h.score) is float for h in hits)


def _masks_one_term_at_a_time(
    plan: QueryPlan, positions: np.ndarray, offsets: np.ndarray, docs: np.ndarray, blocks: np.ndarray | None
) -> np.ndarray:
    """knowledge.retrieval.scoring._term_masks as it was: a binary search and a scatter per term."""
    masks = np.zeros((len(plan.term_ids), len(positions)), dtype=np.uint32)
    for row, term_id in enumerate(plan.term_ids):
        start, end = int(offsets[term_id]), int(offsets[term_id + 1])
        slots = start + np.searchsorted(docs[start:end], positions)
        found = slots < end
        found[found] = docs[slots[found]] == positions[found]
        masks[row, found] = ALL_BLOCKS if blocks is None else blocks[slots[found]]
    return masks


POSTINGS = st.lists(st.sets(st.integers(min_value=0, max_value=40), max_size=25), min_size=1, max_size=8)


@settings(max_examples=200)
@given(POSTINGS, st.lists(st.integers(min_value=0, max_value=45), max_size=40), st.data())
def test_term_masks_for_all_terms_at_once_equal_one_term_at_a_time(
    postings: list[set[int]], asked: list[int], data: st.DataObject
) -> None:
    docs = np.array([d for term in postings for d in sorted(term)], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(term) for term in postings])]).astype(np.int64)
    blocks = np.array([data.draw(st.integers(1, 2**32 - 1)) for _ in range(len(docs))], dtype=np.uint32)
    term_ids = data.draw(st.lists(st.integers(0, len(postings) - 1), min_size=1, unique=True))
    weights = np.array([data.draw(st.floats(0, 9)) for _ in term_ids])
    plan = QueryPlan(np.array(term_ids, dtype=np.int64), np.ones(len(term_ids)), weights, 0.5)
    positions = np.array(asked, dtype=np.int64)

    for kept in (blocks, None):
        masks = _term_masks(plan, positions, offsets, docs, kept)
        assert masks.dtype == np.uint32
        assert masks.tolist() == _masks_one_term_at_a_time(plan, positions, offsets, docs, kept).tolist()
    present = ((masks[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.float64)
    assert (
        _covered_weight(plan, present).tobytes()
        == np.asarray(np.tensordot(weights, present, axes=(0, 0)), dtype=np.float64).tobytes()
    )


BOUNDARIES = "".join(
    chr(c)
    for base in (0x3000, 0x3040, 0x3400, 0x4000, 0x9FFF, 0xA000, 0xF900, 0xFB00, 0xFF00, 0xFFC0, 0xFFEF, 0xFFF0)
    for c in (base - 1, base, base + 1)
)


@given(st.text(st.sampled_from(BOUNDARIES + 'a\\"\n\u00e9\u2014\U0001f600\U00020000预')))
def test_cjk_count_of_utf8_bytes_equals_the_count_of_the_text(text: str) -> None:
    assert cjk_characters_utf8(text.encode()) == len(_CJK_ONE.findall(text))
    assert cjk_characters_utf8(orjson.dumps({"topic": text, "n": 1})) == len(_CJK_ONE.findall(text))


class CountedEntries(Sequence[EntryRecord]):
    """A release's entries that remember which positions were read (entry_table parses on each read)."""

    def __init__(self, entries: Sequence[EntryRecord]) -> None:
        self._entries = entries
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, position: Any) -> Any:
        self.read.add(position)
        return self._entries[position]


@pytest.mark.parametrize(
    ("topic", "budget", "mode", "omits"),
    [
        ("token 预算", 200, "entries", False),
        ("token 预算 规则", 8000, "entries", False),
        ("规则", 300, "payload", True),
        ("", 500, "entries", True),
    ],
)
def test_a_pack_reads_only_the_entries_it_serves_and_says_the_same_of_the_others(
    topic: str, budget: int, mode: str, omits: bool
) -> None:
    records = demo_records()
    index = SearchIndex.compile([e.as_document() for e in records])
    entries = CountedEntries(records)
    view = ReleaseView(release_id=7, namespace=demo_namespace(), stamp=STAMP, entries=entries)
    query = ContextQuery(topic, budget, None, budget_mode=mode)

    ranking, pack = context_pack(index=index, view=view, query=query)
    document = context_payload(query=query, ranking=ranking, pack=pack, view=view, index=index)

    assert bool(document["omitted"]) == omits
    if mode == "entries":  # a payload-mode pack renders candidate packs too
        assert entries.read == {hit.position for hit in pack.packed}
    plain = ReleaseView(release_id=7, namespace=demo_namespace(), stamp=STAMP, entries=records)
    assert orjson.dumps(document) == orjson.dumps(context_payload(query=query, ranking=ranking, pack=pack, view=plain))


QUERY_BYTES = st.lists(
    st.sampled_from(
        [b"topic", b"=", b"&", b"%", b"%E4", b"%B8", b"%ED%A0%80", b"\xe4\xb8\xad", b"\xb8", b"+", b"a", b"2"]
    ),
    max_size=12,
)


def _refused_pair_by_pair(raw: bytes) -> bool:
    """gateway.params.query_bytes_check as it was: every name and value decoded on its own."""
    for pair in raw.split(b"&"):
        name, _, value = pair.partition(b"=")
        for part in (name, value):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return True
    return False


@given(QUERY_BYTES)
def test_a_query_is_refused_as_not_utf8_exactly_when_one_of_its_names_or_values_is(parts: list[bytes]) -> None:
    raw = b"".join(parts)
    try:
        query_bytes_check(raw)
        refused = False
    except BadParameterError:
        refused = True
    assert refused == _refused_pair_by_pair(raw)


@given(st.lists(st.lists(st.integers(0, 2**32 - 1), min_size=3, max_size=3), max_size=5))
def test_block_bits_unpacked_equal_shifted(rows: list[list[int]]) -> None:
    masks = np.array(rows, dtype=np.uint32).reshape(len(rows), 3)
    shifted = (masks[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1

    assert _block_bits(masks).shape == shifted.shape
    assert _block_bits(masks).tolist() == shifted.tolist()


WORDS = st.lists(
    st.sampled_from(
        [
            "the",
            "what",
            "flows",
            "Running",
            "__getattr__",
            "snake_case",
            "EG-202",
            "3.11.2",
            "+=",
            "--dry-run",
            "what's",
            "预算",
            "规则是什么",
            "钟惺的别号",
            "的",
            "ＥＧ－２０２",
            " ",
            ", ",
            "。",
        ]
    ),
    max_size=14,
)


@settings(max_examples=150)
@given(WORDS, st.booleans(), st.sampled_from(["full", "function"]))
def test_remembered_analysis_equals_the_words_stemmed_less_stopwords(parts: list[str], code: bool, stops: str) -> None:
    config = AnalyzerConfig(code_aware=code, stopwords=stops)
    text = " ".join(parts)
    stop = is_stopword if stops == "full" else is_function_word
    plain = [_stem_word(word, config) for word, _, _ in split_words(text, config) if not stop(word)]

    assert analyze_text(text, config) == plain
    assert analyze_text(text, config) == plain  # the second time from what the first remembered


def _scores_one_term_at_a_time(
    plan: QueryPlan, offsets: np.ndarray, docs: np.ndarray, impacts: np.ndarray
) -> np.ndarray:
    """knowledge.retrieval.hits.QueryHits's sums as they were: one ufunc.at per term, in plan order."""
    accumulator = np.zeros(int(docs.max(initial=0)) + 1, dtype=np.float32)
    for term_id, weight in zip(plan.term_ids.tolist(), plan.weights.tolist(), strict=True):
        start, end = int(offsets[term_id]), int(offsets[term_id + 1])
        added = impacts[start:end]
        if weight != 1.0:
            added = added.astype(np.float32) * np.float32(weight)
        np.add.at(accumulator, docs[start:end], added)
    return accumulator


@settings(max_examples=200)
@given(POSTINGS, st.data())
def test_one_add_for_all_terms_sums_as_one_add_per_term(postings: list[set[int]], data: st.DataObject) -> None:
    docs = np.array([d for term in postings for d in sorted(term)], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(term) for term in postings])]).astype(np.int64)
    impacts = np.array([data.draw(st.floats(0.125, 30, width=32)) for _ in docs], dtype=np.float32)
    term_ids = data.draw(st.lists(st.integers(0, len(postings) - 1), unique=True))
    weights = np.array([data.draw(st.sampled_from([1.0, 2.0, 0.5, 3.0])) for _ in term_ids])
    plan = QueryPlan(np.array(term_ids, dtype=np.int64), weights, np.ones(len(term_ids)), 0.0)
    count = int(docs.max(initial=0)) + 1
    hits = QueryHits(
        plan,
        offsets=offsets,
        docs=docs,
        impacts=impacts,
        min_tokens=np.ones(len(postings), dtype=np.int64),
        factor=np.ones(count),
        tokens=np.ones(count, dtype=np.int32),
        allowed=None,
        accumulators=Accumulators(),
    )
    expected = _scores_one_term_at_a_time(plan, offsets, docs, impacts)

    positions, scores = hits.scored()
    assert positions.tolist() == np.flatnonzero(expected).tolist()
    assert scores.tobytes() == expected[positions].astype(np.float64).tobytes()


@settings(max_examples=200)
@given(POSTINGS, st.data())
def test_hits_extended_by_more_terms_sum_as_the_longer_plan_scored_afresh(
    postings: list[set[int]], data: st.DataObject
) -> None:
    """QueryHits.extended (feedback's second pass) starts from the first pass's sums: the same bytes."""
    docs = np.array([d for term in postings for d in sorted(term)], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(term) for term in postings])]).astype(np.int64)
    # Impacts with all their low bits, so that a sum in another order would show.
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    impacts = rng.uniform(0.125, 30, len(docs)).astype(np.float32)
    term_ids = data.draw(st.lists(st.integers(0, len(postings) - 1), unique=True))
    leading = data.draw(st.integers(0, len(term_ids)))
    weights = [data.draw(st.sampled_from([1.0, 2.0])) for _ in term_ids[:leading]]
    weights += [data.draw(st.floats(0.001, 0.3)) for _ in term_ids[leading:]]  # as feedback weighs them
    count = int(docs.max(initial=0)) + 1
    allowed = data.draw(st.none() | st.lists(st.booleans(), min_size=count, max_size=count).map(np.array))
    accumulators = Accumulators()

    def hits(plan: QueryPlan) -> QueryHits:
        return QueryHits(
            plan,
            offsets=offsets,
            docs=docs,
            impacts=impacts,
            min_tokens=np.ones(len(postings), dtype=np.int64),
            factor=np.linspace(0.5, 1.5, count),
            tokens=np.ones(count, dtype=np.int32),
            allowed=allowed,
            accumulators=accumulators,
        )

    ids = np.array(term_ids, dtype=np.int64)
    plan = QueryPlan(ids, np.array(weights), np.ones(len(term_ids)), 0.0)
    first = QueryPlan(ids[:leading], np.array(weights[:leading]), np.ones(leading), 0.0)
    fresh = hits(plan)
    extended = hits(first).extended(plan)

    assert extended.postings == fresh.postings
    assert extended.min_tokens == fresh.min_tokens
    for got, expected in zip(extended.scored(), fresh.scored(), strict=True):
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    assert not accumulators.get(count).any()  # left zeroed for the next query


@given(st.sets(st.integers(0, 60)), st.lists(st.integers(0, 70), unique=True))
def test_among_is_isin_for_sorted_distinct_terms(ids: set[int], asked: list[int]) -> None:
    sorted_ids = np.array(sorted(ids), dtype=np.int32)
    wanted = np.array(asked, dtype=np.int64)
    assert _among(sorted_ids, wanted).tolist() == np.isin(sorted_ids, wanted).tolist()


def _expanded_plan_by_unique(
    plan: QueryPlan, positions: np.ndarray, scores: np.ndarray, forward: ForwardIndex
) -> QueryPlan:
    """feedback.expanded_plan as it was: np.unique's inverse, one multiplication per entry."""
    best = positions[: feedback.FEEDBACK_ENTRIES]
    if len(best) < feedback.FEEDBACK_SHARED or scores[0] <= 0:
        return plan
    slices = [slice(int(forward.offsets[p]), int(forward.offsets[p + 1])) for p in best]
    terms = np.concatenate([forward.terms[s] for s in slices])
    weighted = np.concatenate(
        [forward.impacts[s] * (float(score) / float(scores[0])) for s, score in zip(slices, scores, strict=False)]
    )
    ids, inverse, held = np.unique(terms, return_inverse=True, return_counts=True)
    mass = np.bincount(inverse, weights=weighted, minlength=len(ids))
    common = forward.entries[ids] > feedback.FEEDBACK_MAX_SHARE * (len(forward.offsets) - 1)
    keep = (held >= feedback.FEEDBACK_SHARED) & ~common & ~np.isin(ids, plan.term_ids)
    ids, mass = ids[keep], mass[keep]
    if not len(ids):
        return plan
    chosen = np.lexsort((ids, -mass))[: feedback.FEEDBACK_TERMS]
    added = feedback.FEEDBACK_WEIGHT * mass[chosen] / mass[chosen[0]]
    return QueryPlan(
        np.concatenate([plan.term_ids, ids[chosen].astype(plan.term_ids.dtype)]),
        np.concatenate([plan.weights, added]),
        np.concatenate([plan.informative_idf, np.zeros(len(chosen))]),
        plan.unknown_idf,
    )


# Many terms, each in a few of the first 8 of 100 entries (the last term holds entry 99): under
# FEEDBACK_MAX_SHARE, so the terms the best of those entries share join.
FEEDBACK_POSTINGS = st.lists(st.sets(st.integers(0, 7), min_size=1, max_size=4), min_size=1, max_size=60).map(
    lambda terms: [*terms, {99}]
)


@settings(max_examples=200)
@given(FEEDBACK_POSTINGS, st.data())
def test_expanded_plan_equals_the_plan_np_unique_gave(postings: list[set[int]], data: st.DataObject) -> None:
    """Feedback's terms, their weights and their order: the same bytes as with np.unique and per-entry products."""
    docs = np.array([d for term in postings for d in sorted(term)], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(term) for term in postings])]).astype(np.int64)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    impacts = rng.uniform(0.125, 30, len(docs)).astype(np.float32)
    count = int(docs.max(initial=0)) + 1
    forward = ForwardIndex.transposed(offsets=offsets, docs=docs, impacts=impacts, count=count)
    asked = np.array(data.draw(st.lists(st.integers(0, len(postings) - 1), unique=True, max_size=4)), dtype=np.int64)
    plan = QueryPlan(asked, np.ones(len(asked)), np.ones(len(asked)), 0.0)
    positions = np.array(data.draw(st.lists(st.integers(0, 9), unique=True, min_size=2, max_size=7)), dtype=np.int64)
    scores = np.sort(rng.uniform(0.5, 20, len(positions)))[::-1]

    got = expanded_plan(plan, positions, scores, forward)
    expected = _expanded_plan_by_unique(plan, positions, scores, forward)

    for name in ("term_ids", "weights", "informative_idf"):
        assert getattr(got, name).tobytes() == getattr(expected, name).tobytes()


def _two_steps(raw: bytes) -> Any:
    """gateway.fastmiss's parse as it was: query_bytes_check, then the query as text with replacements."""
    try:
        query_bytes_check(raw)
        return context_query_from_string(raw.decode("utf-8", "replace"), categories=["fact"], default_budget=2000)
    except BadParameterError as error:
        return error.body()


@given(QUERY_BYTES, st.lists(st.sampled_from([b"budget=300", b"category=fact", b"paths=a.py", b"&"]), max_size=3))
def test_a_query_parsed_from_bytes_equals_the_check_then_the_text(parts: list[bytes], more: list[bytes]) -> None:
    raw = b"".join(parts) + b"&".join(more)
    try:
        parsed: Any = context_query_from_bytes(raw, categories=["fact"], default_budget=2000)
    except BadParameterError as error:
        parsed = error.body()
    assert parsed == _two_steps(raw)


@pytest.mark.parametrize("raw", [b"&".join([b"a=1"] * 101), b"&".join([b"a=%ff"] * 101), b"topic=%e4%b8\xad"])
def test_too_many_parameters_and_raw_bytes_parse_from_bytes_as_before(raw: bytes) -> None:
    try:
        parsed: Any = context_query_from_bytes(raw, categories=["fact"], default_budget=2000)
    except BadParameterError as error:
        parsed = error.body()
    assert parsed == _two_steps(raw)

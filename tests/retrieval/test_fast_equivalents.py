"""The cache miss's faster code gives what the plain version it replaced gives (issue 18: byte-identical answers)."""

from __future__ import annotations

import re
import sys
import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.params import _control
from knowledge.retrieval.ranking import ArrayHits, Ranking
from knowledge.retrieval.tokens import cjk_characters
from knowledge.retrieval.vocabulary import Vocabulary

# The estimator's characters, counted one match per character as before (seed §4).
_CJK_ONE = re.compile(r"[\u3000-\u303F\u3400-\u9FFF\uF900-\uFAFF\uFF00-\uFFEF]")
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

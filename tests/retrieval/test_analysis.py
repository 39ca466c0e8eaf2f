"""Analysis: the same terms at index and query time, in Chinese, English and mixed text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledge.retrieval.analysis import (
    AnalyzerConfig,
    analyze_tags,
    analyze_text,
    exact_tag_candidates,
    normalize_text,
)

CONFIG = AnalyzerConfig()


def test_english_is_lowercased_stemmed_and_stopped() -> None:
    assert analyze_text("What are the Effects of Heated Boundary Layers?", CONFIG) == [
        "effect",
        "heat",
        "boundari",
        "layer",
    ]


def test_chinese_is_segmented_without_particles_or_question_words() -> None:
    terms = analyze_text("Token 预算纪律是什么？哪几个部分组成", CONFIG)

    assert "预算" in terms
    assert "纪律" in terms
    assert "token" in terms
    assert not {"是", "什么", "哪几个", "？"} & set(terms)


def test_full_width_text_folds_to_the_same_terms() -> None:
    assert analyze_text("ＴＯＫＥＮ　ＢＵＤＧＥＴ　ＥＧ－２０２", CONFIG) == analyze_text("token budget EG-202", CONFIG)


def test_ids_are_one_term_plus_their_parts() -> None:
    assert analyze_text("see CRAN-0001", CONFIG) == ["see", "cran-0001", "cran", "0001"]


def test_place_names_starting_with_question_characters_survive() -> None:
    assert "几内亚" in "".join(analyze_text("几内亚的首都", CONFIG))


def test_tags_index_their_exact_key_and_words() -> None:
    assert analyze_tags(("A/B Test",), CONFIG) == ["#a b test", "b", "test"]
    assert "#a b test" in exact_tag_candidates("how to run an A/B test", CONFIG)


@given(st.text(max_size=60))
def test_analysis_is_deterministic_and_never_yields_empty_terms(text: str) -> None:
    first = analyze_text(text, CONFIG)

    assert first == analyze_text(text, CONFIG)
    assert all(term.strip() for term in first)


@given(st.text(max_size=40))
def test_folding_is_idempotent(text: str) -> None:
    assert normalize_text(normalize_text(text)) == normalize_text(text)


def test_code_tokens_are_matched_whole_and_by_their_parts() -> None:
    cases = {
        "__getattr__": ["__getattr__", "getattr"],
        "snake_case": ["snake_case", "snake", "case"],
        "CamelCase": ["camelcas", "camel", "case"],
        "HTTPResponse": ["httprespons", "http", "respons"],
        "django.utils.text": ["django.utils.text", "django", "util", "text"],
        "--no-color": ["--no-color", "color"],
        "3.11.2": ["3.11.2", "3", "11", "2"],
        "E501": ["e501", "501"],
        "ERR_CONNECTION_REFUSED": ["err_connection_refused", "err", "connect", "refus"],
        "x += 1": ["x", "+=", "1"],
        "a != b": ["!=", "b"],
    }
    for text, terms in cases.items():
        assert analyze_text(text, CONFIG) == terms, text


def test_prose_compounds_are_only_their_words_whatever_the_hyphen() -> None:
    assert analyze_text("boundary-layer flow", CONFIG) == analyze_text("boundary layer flow", CONFIG)


def test_a_question_naming_part_of_an_identifier_finds_it() -> None:
    question = set(analyze_text("what does getattr do", CONFIG))
    assert question & set(analyze_text("Implement __getattr__ on a module", CONFIG))


def test_without_code_aware_analysis_words_split_at_punctuation() -> None:
    legacy = AnalyzerConfig(code_aware=False)

    assert analyze_text("see CRAN-0001 and __init__", legacy) == ["see", "cran-0001", "cran", "0001", "init"]


def test_question_filler_is_a_stopword_only_in_the_full_list() -> None:
    assert analyze_text("has anyone any papers on flow", CONFIG) == ["flow"]
    assert "anyon" in analyze_text("has anyone any papers on flow", AnalyzerConfig(stopwords="function"))


def test_a_dotted_name_keeps_each_of_its_compound_names_whole() -> None:
    assert analyze_text("django.utils.safestring.mark_safe", CONFIG) == [
        "django.utils.safestring.mark_safe",
        "django",
        "util",
        "safestr",
        "mark_safe",
        "mark",
        "safe",
    ]
    assert analyze_text("QuerySet.bulk_create()", CONFIG)[:3] == ["queryset.bulk_create", "queryset", "queri"]
    assert "__getattr__" in analyze_text("module.__getattr__", CONFIG)
    assert analyze_text("django.utils.text", CONFIG) == ["django.utils.text", "django", "util", "text"]


def test_before_dotted_names_a_dotted_name_was_only_its_words() -> None:
    before = AnalyzerConfig(dotted_names=False)

    assert "mark_safe" not in analyze_text("django.utils.safestring.mark_safe", before)
    assert analyze_text("mark_safe", before) == analyze_text("mark_safe", CONFIG)


def test_a_negative_contraction_is_its_verb_not_a_fragment() -> None:
    assert analyze_text("the key doesn't exist, isn’t set and won't expire", CONFIG) == ["key", "set", "expir"]
    assert analyze_text("DON'T wrap; you can't, cannot, shan't", CONFIG) == ["wrap"]
    assert analyze_text("it needn't be escaped", CONFIG) == analyze_text("it need not be escaped", CONFIG)
    assert analyze_text("what's Evergreen's budget", CONFIG) == ["evergreen", "budget"]


def test_before_contractions_a_negative_left_its_fragment() -> None:
    before = AnalyzerConfig(contractions=False)

    assert analyze_text("the key doesn't exist and won't expire", before) == ["key", "doesn", "won", "expir"]
    assert AnalyzerConfig.from_meta({}).contractions is False

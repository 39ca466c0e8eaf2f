"""knowledge.retrieval.citations: markers, the sentences they back and the figures those quote (pure)."""

from __future__ import annotations

from knowledge.retrieval.citations import citations_find, figure_appears, figures_missing


def test_markers_are_found_with_the_sentence_they_back() -> None:
    answer = "Ask for 2000 tokens by default [EG-202]. Raise it when truncated.\n[eg-010, EG-011] Use ETags."
    found = citations_find(answer)
    assert [(c.id, c.marker) for c in found] == [
        ("EG-202", "[EG-202]"),
        ("EG-010", "[eg-010, EG-011]"),
        ("EG-011", "[eg-010, EG-011]"),
    ]
    assert found[0].sentence == "Ask for 2000 tokens by default ."
    assert found[0].figures == ("2000",)
    assert found[1].sentence.startswith("Use ETags")
    assert answer[found[0].start : found[0].end] == "[EG-202]"


def test_a_marker_after_the_full_stop_backs_the_sentence_before_it() -> None:
    found = citations_find("The limit is 120 requests per minute. [EG-030]")
    assert found[0].figures == ("120",)
    assert "120 requests" in found[0].sentence


def test_list_numbers_citation_ids_and_words_with_digits_are_not_figures() -> None:
    found = citations_find("1. Send the MCP2 header to EG-7 clients [EG-101].")
    assert found[0].figures == ()


def test_full_width_digits_are_the_same_figure() -> None:
    found = citations_find("预算默认为２０００个令牌【不是标记】[EG-202]。")
    assert found[0].figures == ("2000",)


def test_a_figure_must_appear_whole_not_inside_a_longer_number() -> None:
    assert figure_appears("2000", "default 2000 tokens")
    assert figure_appears("0.85", "factor 0.85 + confidence")
    assert not figure_appears("2000", "a budget of 12000 tokens")
    assert not figure_appears("2000", "2000.5 tokens")
    assert not figure_appears("2,000", "2000 tokens")  # rewritten figures are not verbatim
    assert figures_missing(("2000", "15"), ["ask 2000", "nothing"]) == ["15"]

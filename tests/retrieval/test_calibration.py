"""A release's threshold from the collection itself: built-in probes and held-out pseudo-questions."""

from __future__ import annotations

import math

from knowledge.retrieval.calibration import (
    PROBES_REFUSED,
    matching_summary,
    probe_questions,
    pseudo_questions,
    threshold_automatic,
)
from knowledge.retrieval.index import SearchIndex, SearchOptions
from tests.retrieval.helpers import demo_documents, make_document


def test_the_probes_are_bilingual_and_everyday() -> None:
    probes = probe_questions()

    assert len(probes) >= 150
    assert any("天气" in p or "下雨" in p for p in probes)
    assert any(p.isascii() for p in probes)
    assert not any(p.startswith("#") for p in probes)


def test_the_demo_threshold_refuses_the_probes_and_is_reproducible() -> None:
    documents = demo_documents()
    index = SearchIndex.compile(documents)

    first = threshold_automatic(index, documents)

    assert first == threshold_automatic(SearchIndex.compile(documents), documents)
    assert first.probes_refused >= PROBES_REFUSED
    assert first.pseudo_questions == len(documents)
    served = index.with_threshold(first.threshold, first.to_meta())
    assert sum(served.search(p).matched for p in probe_questions()) <= (1 - PROBES_REFUSED) * len(probe_questions())


def test_pseudo_questions_are_held_out_of_the_entry_they_come_from() -> None:
    documents = demo_documents()
    corpus, questions = pseudo_questions(SearchIndex.compile(documents), documents)

    assert len(corpus) == len(documents) and len(questions) == len(documents)
    changed = [after for before, after in zip(documents, corpus, strict=True) if after != before]
    assert changed, "each question's text was cut out of its entry"
    assert all(
        len(after.body) + len(after.summary) < len(before.body) + len(before.summary)
        for before, after in zip(documents, corpus, strict=True)
        if after != before
    )


def test_a_knowledge_base_about_the_probes_subject_still_answers_its_own_questions() -> None:
    # Entries about weather and cooking: most probes hit them, but the pseudo-questions bound the threshold.
    documents = [
        make_document(f"KB-{n:03d}", title, body=body)
        for n, (title, body) in enumerate(
            [
                ("Rain forecast for Madrid", "Will it rain in Madrid on Saturday? Showers in the afternoon."),
                ("Boiling eggs", "Boil an egg for six minutes for a runny yolk, then cool it in water."),
                ("Pancakes without buttermilk", "Fluffy pancakes: milk, lemon juice, flour, eggs and baking powder."),
                ("Humidity in Singapore", "The humidity in Singapore is usually above 80 percent."),
            ]
        )
    ]
    index = SearchIndex.compile(documents)

    chosen = threshold_automatic(index, documents)

    assert chosen.pseudo_matched >= 0.5
    served = index.with_threshold(chosen.threshold, chosen.to_meta())
    assert served.search("How many minutes should I boil an egg for a runny yolk?").matched


def test_an_empty_namespace_calibrates_without_error() -> None:
    chosen = threshold_automatic(SearchIndex.compile([]), [])

    assert chosen.threshold >= 0 and not math.isnan(chosen.threshold)
    assert chosen.pseudo_questions == 0


def test_the_recorded_matching_reads_as_one_line() -> None:
    documents = demo_documents()
    chosen = threshold_automatic(SearchIndex.compile(documents), documents)

    line = matching_summary({"threshold": chosen.threshold, **chosen.to_meta()})

    assert "calibrated automatically" in line and "probe questions" in line
    assert "namespace's own" in matching_summary({"threshold": 0.5, "source": "namespace", "note": "golden"})
    assert "Not recorded" in matching_summary({})
    assert SearchOptions().packing == "relevant"

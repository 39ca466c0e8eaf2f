"""A release's threshold from the collection itself: built-in probes and held-out pseudo-questions."""

from __future__ import annotations

import math

import numpy as np

from knowledge.retrieval.calibration import (
    CROWDED,
    PROBES_REFUSED,
    crowding,
    matching_summary,
    pack_best_share,
    probe_quantile,
    probe_questions,
    pseudo_questions,
    threshold_automatic,
)
from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.relevance import BEST_SHARE
from tests.retrieval.helpers import demo_documents, make_document


def test_the_probes_are_bilingual_and_everyday() -> None:
    probes = probe_questions()

    assert len(probes) >= 400
    assert len(set(probes)) == len(probes)
    assert any("天气" in p or "下雨" in p for p in probes)
    assert any(p.isascii() for p in probes)
    assert not any(p.startswith("#") for p in probes)


def test_the_demo_threshold_refuses_the_probes_and_is_reproducible() -> None:
    documents = demo_documents()
    index = SearchIndex.compile(documents)

    first = threshold_automatic(index, documents)

    assert first == threshold_automatic(SearchIndex.compile(documents), documents)
    # A smoothed quantile: within a point of the share it aims at, not exactly on it.
    assert first.probes_refused >= PROBES_REFUSED - 0.01
    assert first.pseudo_questions == len(documents)
    served = index.with_threshold(first.threshold, first.to_meta())
    refused = sum(not served.search(p).matched for p in probe_questions()) / len(probe_questions())
    assert refused == first.probes_refused


def test_the_probe_quantile_moves_little_when_one_probe_crosses_the_coverage_floor() -> None:
    # 200 probes, 8 past the coverage floor: the plain order statistic at 96 % is 0 (a refused probe);
    # one more probe past the floor makes it 0.5. The smoothed quantile moves by a fraction of that.
    finite = [0.55, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]
    before = [-math.inf] * (200 - len(finite)) + finite
    after = [-math.inf] * (199 - len(finite)) + [0.5, *finite]
    plain = [float(np.sort(np.maximum(s, 0.0))[math.ceil(PROBES_REFUSED * 200) - 1]) for s in (before, after)]
    smooth = [probe_quantile(s, PROBES_REFUSED) for s in (before, after)]

    assert plain[1] - plain[0] >= 0.5
    assert 0 < smooth[1] - smooth[0] < 0.5 * (plain[1] - plain[0])
    assert probe_quantile([], PROBES_REFUSED) == 0.0
    assert probe_quantile([-math.inf] * 50, PROBES_REFUSED) == 0.0


def test_a_crowded_collection_keeps_every_hit_above_the_plain_floors() -> None:
    # Abstracts of one field: every question is covered nearly as well by many entries.
    crowded = [
        make_document(
            f"AB-{n:03d}",
            f"Boundary layer flow study {n}",
            body=f"Boundary layer transition on a flat plate in supersonic flow, case {n}. "
            "Skin friction and heat transfer measured in the wind tunnel at several Mach numbers.",
        )
        for n in range(12)
    ]
    # Reference pages on different subjects: each question has one entry.
    subjects = [
        "sorted set ranges",
        "template filters",
        "array broadcasting",
        "command line flags",
        "time zone conversion",
        "regular expression groups",
        "queue blocking pops",
        "html escaping",
    ]
    distinct = [
        make_document(f"RF-{n:03d}", subject.title(), body=f"How {subject} work: a detailed explanation of {subject}.")
        for n, subject in enumerate(subjects)
    ]
    asked = ["skin friction on a flat plate", "heat transfer at several Mach numbers", "supersonic transition"]
    many = crowding(SearchIndex.compile(crowded), asked)
    few = crowding(SearchIndex.compile(distinct), [f"explain {s}" for s in subjects])

    assert many >= CROWDED and pack_best_share(many) == 0.0
    assert few < CROWDED and pack_best_share(few) == BEST_SHARE


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
    assert "best hit's coverage" in line or "plain floors" in line
    assert SearchOptions().packing == "relevant"

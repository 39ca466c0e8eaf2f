"""Dev-split quality on the development collections (slow; skipped without the shared datasets).

Each collection is served as a new site serves it: the threshold a release build calibrates from
its entries and the built-in probes (no golden questions), and relevance floors on the pack. Only
dev questions are read (bench.datasets drops every other split before looking at it).
"""

from __future__ import annotations

import math

import pytest

from bench.datasets import DATASETS, load_dev_queries, load_documents
from bench.evaluate_datasets import EngineRun, evaluate_engine
from knowledge.retrieval.calibration import threshold_automatic
from knowledge.retrieval.evaluation import EvalQuestion, calibrate_threshold, calibration_margin, summarize_outcomes
from knowledge.retrieval.index import SearchIndex

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (DATASETS / "cmrc2018").exists(), reason="shared datasets not present"),
]


def served(collection: str) -> tuple[float, EngineRun, list[EvalQuestion]]:
    documents = load_documents(collection)
    questions = load_dev_queries(collection)
    index = SearchIndex.compile(documents)
    chosen = threshold_automatic(index, documents)
    # Feedback is switched on by the collection's own crowding: Cranfield's abstracts only.
    assert chosen.feedback is (collection == "cranfield")
    index = index.with_threshold(
        chosen.threshold, chosen.to_meta(), pack_best_share=chosen.pack_best_share, feedback=chosen.feedback
    )
    run = evaluate_engine(index, documents, questions)
    return chosen.threshold, run, questions


def test_cranfield_ranks_above_bm25s_and_matches_its_questions_without_golden_questions() -> None:
    threshold, run, _ = served("cranfield")
    report = summarize_outcomes(run.served(threshold))

    assert report.ndcg_at_10 is not None and report.ndcg_at_10 >= 0.42  # 0.402 without feedback; bm25s: 0.367
    assert report.matched_when_covered is not None and report.matched_when_covered >= 0.90
    assert report.hit_rate is not None and report.hit_rate >= 0.83  # as without feedback


def test_cmrc_matches_and_refuses_with_the_automatic_threshold() -> None:
    threshold, run, _ = served("cmrc2018")
    report = summarize_outcomes(run.served(threshold))

    # Weak hits (below the threshold, matched=false) are still packed, so the hit rate holds.
    assert report.hit_rate is not None and report.hit_rate >= 0.98
    assert report.matched_when_covered is not None and report.matched_when_covered >= 0.96  # measured 0.969
    # Issue 11 asks 0.92 here; no threshold gets there at matched 0.96 (best possible 0.907).
    assert report.unmatched_when_uncovered is not None and report.unmatched_when_uncovered >= 0.84  # 0.873
    assert report.filler is not None and report.filler <= 0.2  # 0.116; 0.74 when the budget is filled


def test_cmrc_golden_questions_refine_the_threshold_with_a_margin() -> None:
    _, run, questions = served("cmrc2018")
    scores = run.gate_scores
    covered = [s for q, s in zip(questions, scores, strict=True) if q.relevant]
    uncovered = [s for q, s in zip(questions, scores, strict=True) if not q.relevant]
    margin = calibration_margin(target=0.96, covered=len(covered))
    threshold = max(0.0, calibrate_threshold(covered, uncovered, min_matched=0.96 + margin))
    report = summarize_outcomes(run.served(threshold))

    assert report.matched_when_covered is not None and report.matched_when_covered >= 0.96 + margin - 1e-9
    assert report.unmatched_when_uncovered is not None and report.unmatched_when_uncovered >= 0.85
    assert not math.isinf(threshold)


def test_pylibs_answers_developers_and_refuses_off_topic_questions_without_golden_questions() -> None:
    threshold, run, _ = served("pylibs")
    report = summarize_outcomes(run.served(threshold))

    assert report.ndcg_at_10 is not None and report.ndcg_at_10 >= 0.82  # bm25s: 0.809
    assert report.matched_when_covered is not None and report.matched_when_covered >= 0.90
    assert report.unmatched_when_uncovered is not None and report.unmatched_when_uncovered >= 0.80  # 11 of 13

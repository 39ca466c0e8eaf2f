"""Evaluation metrics on hand-computed examples."""

from __future__ import annotations

import math

import pytest

from knowledge.retrieval.evaluation import (
    QueryOutcome,
    calibrate_threshold,
    is_hit,
    ndcg_at_k,
    pack_recall,
    reciprocal_rank_at_k,
    summarize_outcomes,
)


def test_ndcg_uses_linear_gains_and_log2_discounts() -> None:
    relevant = {"A": 3, "B": 1}

    assert ndcg_at_k(["A", "B"], relevant) == pytest.approx(1.0)
    expected = (1 / math.log2(2) + 3 / math.log2(3)) / (3 / math.log2(2) + 1 / math.log2(3))
    assert ndcg_at_k(["B", "A"], relevant) == pytest.approx(expected)
    assert ndcg_at_k(["X"] * 10 + ["A"], relevant) == 0.0


def test_reciprocal_rank_stops_at_k() -> None:
    assert reciprocal_rank_at_k(["X", "A"], {"A": 1}) == 0.5
    assert reciprocal_rank_at_k(["X"] * 10 + ["A"], {"A": 1}) == 0.0


def test_pack_recall_and_hit() -> None:
    assert pack_recall(["A", "C"], {"A": 1, "B": 2}) == 0.5
    assert is_hit(["C", "B"], {"A": 1, "B": 2})
    assert not is_hit(["C"], {"A": 1})


def test_summary_measures_refusals_only_on_uncovered_questions() -> None:
    outcomes = [
        QueryOutcome("q1", {"A": 1}, ["A"], ["A"], matched=True, seconds=0.001),
        QueryOutcome("q2", {"A": 1}, ["B"], ["B"], matched=False, seconds=0.003),
        QueryOutcome("q3", {}, ["B"], ["B"], matched=False, seconds=0.002),
    ]

    report = summarize_outcomes(outcomes)

    assert (report.covered, report.uncovered) == (2, 1)
    assert report.hit_rate == 0.5
    assert report.matched_when_covered == 0.5
    assert report.unmatched_when_uncovered == 1.0
    assert report.latency_p50_ms == pytest.approx(2.0)


def test_calibration_keeps_the_share_of_covered_questions_matched() -> None:
    covered = [float(v) for v in range(1, 21)]  # 1..20
    threshold = calibrate_threshold(covered, [0.5, 1.5], min_matched=0.95)

    assert threshold == 2.0
    assert sum(v >= threshold for v in covered) / len(covered) >= 0.95


def test_calibration_without_uncovered_examples_refuses_nothing() -> None:
    assert calibrate_threshold([0.3, 0.9], []) == 0.0

"""Dev-split quality targets of issue 5 on the shared collections (slow; skipped without them)."""

from __future__ import annotations

import pytest

from bench.datasets import DATASETS, load_dev_queries, load_documents
from bench.evaluate_datasets import evaluate_engine
from knowledge.retrieval.evaluation import calibrate_threshold, summarize_outcomes
from knowledge.retrieval.index import DEFAULT_MATCH_THRESHOLD, SearchIndex

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (DATASETS / "cmrc2018").exists(), reason="shared datasets not present"),
]


def test_cranfield_dev_ndcg_beats_the_bm25_reference() -> None:
    documents = load_documents("cranfield")
    run = evaluate_engine(SearchIndex.compile(documents), documents, load_dev_queries("cranfield"))

    # Cranfield's dev split has no uncovered questions, so its calibrated threshold refuses nothing.
    report = summarize_outcomes(run.served(0.0))

    assert report.ndcg_at_10 is not None
    assert report.ndcg_at_10 >= 0.40


def test_cmrc_dev_hits_and_refusals_at_the_default_threshold() -> None:
    documents = load_documents("cmrc2018")
    queries = load_dev_queries("cmrc2018")
    run = evaluate_engine(SearchIndex.compile(documents), documents, queries)
    covered = [s for q, s in zip(queries, run.match_scores, strict=True) if q.relevant]
    uncovered = [s for q, s in zip(queries, run.match_scores, strict=True) if not q.relevant]

    ranking_only = summarize_outcomes(run.ranked)
    served = summarize_outcomes(run.served(DEFAULT_MATCH_THRESHOLD))

    assert ranking_only.hit_rate is not None and ranking_only.hit_rate >= 0.98
    assert served.matched_when_covered is not None and served.matched_when_covered >= 0.94
    assert served.unmatched_when_uncovered is not None and served.unmatched_when_uncovered >= 0.85
    assert calibrate_threshold(covered, uncovered) == pytest.approx(DEFAULT_MATCH_THRESHOLD, abs=0.02)

"""An empty namespace compiles to an index without NaNs or numpy warnings, and searching it finds nothing."""

from __future__ import annotations

import warnings

import numpy as np

from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.postings import BM25FParams, build_postings


def test_postings_of_no_documents_hold_only_finite_numbers() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        postings, lengths = build_postings([], config=AnalyzerConfig(), params=BM25FParams())
    assert len(postings.docs) == 0 and lengths.shape[0] == 0
    assert np.isfinite(postings.idf).all() and np.isfinite(postings.bm25f).all()


def test_an_empty_index_answers_every_kind_of_query_with_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        index = SearchIndex.from_bytes(SearchIndex.compile([]).to_bytes())
        for topic in ("", "token budget", "令牌预算"):
            ranking = index.search(topic)
            assert ranking.total == 0 and list(ranking) == []

"""Postings made a run of documents at a time and merged (postings.RUN_OCCURRENCES, which bounds a large
compile's memory) are byte for byte those of one run over the whole collection."""

from __future__ import annotations

import pytest

from knowledge.retrieval import postings
from knowledge.retrieval.index import SearchIndex
from tests.retrieval.helpers import demo_documents
from tests.retrieval.test_index_patching import collection


@pytest.mark.parametrize("run_occurrences", [1, 97, 5_000])
def test_an_index_compiled_in_runs_is_the_one_compiled_at_once(
    monkeypatch: pytest.MonkeyPatch, run_occurrences: int
) -> None:
    documents = collection(size=120, seed=11)
    at_once = SearchIndex.compile(documents, patchable=True).to_bytes()
    monkeypatch.setattr(postings, "RUN_OCCURRENCES", run_occurrences)
    assert SearchIndex.compile(documents, patchable=True).to_bytes() == at_once


def test_the_demo_namespace_compiled_a_document_per_run_is_the_one_compiled_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    documents = list(demo_documents())
    at_once = SearchIndex.compile(documents).to_bytes()
    monkeypatch.setattr(postings, "RUN_OCCURRENCES", 1)
    assert SearchIndex.compile(documents).to_bytes() == at_once

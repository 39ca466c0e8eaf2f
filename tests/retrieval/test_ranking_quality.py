"""The ranking's idf, and the dev nDCG@10 floor of pylibs (the development collection that ships with Evergreen).

Only dev questions are read (bench.datasets drops every other split before looking at it).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bench.datasets import load_dev_queries, load_documents
from bench.quality import Collection, Config
from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.postings import BM25FParams, bm25_idf, ranking_idf


def test_the_ranking_idf_weighs_a_word_in_most_entries_at_the_floor_and_never_below() -> None:
    doc_freq = np.array([1, 10, 50, 100])

    idf = ranking_idf(doc_freq, 100, 0.5)

    assert idf[0] > idf[1] > 0.5
    assert idf[2] == idf[3] == np.float32(0.5)  # RSJ: 0 and -5.3; Lucene's: 0.69 and 0.005
    assert (ranking_idf(doc_freq, 100, None) == bm25_idf(doc_freq, 100)).all()


def test_an_index_remembers_the_idf_it_ranked_with() -> None:
    document = Document(id="EG-1", category="fact", title="t", summary="", body="b", tags=(), confidence=1.0, tokens=5)
    default = SearchIndex.compile([document])
    lucene = SearchIndex.compile([document], params=replace(BM25FParams(), idf_floor=None))

    assert SearchIndex.from_bytes(default.to_bytes()).params.idf_floor == 0.5  # the floored RSJ idf
    assert SearchIndex.from_bytes(lucene.to_bytes()).params.idf_floor is None  # a release built before it


def test_an_index_compiled_before_the_idf_was_recorded_keeps_lucenes() -> None:
    document = Document(id="EG-1", category="fact", title="t", summary="", body="b", tags=(), confidence=1.0, tokens=5)
    index = SearchIndex.compile([document])
    meta = {**index._meta, "params": {k: v for k, v in index._meta["params"].items() if k != "idf_floor"}}

    assert SearchIndex(meta, index._arrays).params.idf_floor is None  # not today's default


def _entry(key: str, title: str, body: str) -> Document:
    return Document(id=key, category="fact", title=title, summary="", body=body, tags=(), confidence=1.0, tokens=20)


MARK_SAFE = [
    _entry(
        "PY-1",
        "django.utils.safestring.mark_safe",
        "Explicitly mark a string as safe for HTML output. The returned object can be used everywhere a string is"
        " appropriate.",
    ),
    _entry(
        "PY-2",
        "django.utils.html.format_html",
        "Like str.format, but escaping every argument: a string built with it needs no mark_safe(). Prefer it to"
        " mark_safe() on a string of HTML.",
    ),
    _entry("PY-3", "django.utils.html.escape", "Return the given text with ampersands, quotes and brackets encoded."),
    _entry("PY-4", "django.utils.html.conditional_escape", "Like escape(), except that a string marked safe is kept."),
    _entry("PY-5", "django.utils.safestring.SafeString", "A str subclass specifically marked as safe for HTML output."),
]


def test_a_question_naming_the_last_name_of_a_dotted_name_finds_that_entry_first() -> None:
    question = "mark_safe: tell Django a string needs no escaping"
    best = SearchIndex.compile(MARK_SAFE).search(question, options=SearchOptions(match_threshold=-np.inf))
    split = SearchIndex.compile(MARK_SAFE, analyzer=AnalyzerConfig(dotted_names=False))
    before = split.search(question, options=SearchOptions(match_threshold=-np.inf))

    assert MARK_SAFE[next(iter(best)).position].id == "PY-1"
    assert MARK_SAFE[next(iter(before)).position].id == "PY-2"  # format_html, which mentions mark_safe() twice


def test_an_index_compiled_before_dotted_names_keeps_analysing_them_as_it_did() -> None:
    index = SearchIndex.compile(MARK_SAFE)
    meta = {**index._meta, "analyzer": {k: v for k, v in index._meta["analyzer"].items() if k != "dotted_names"}}

    assert SearchIndex.from_bytes(index.to_bytes()).analyzer.dotted_names is True
    assert SearchIndex(meta, index._arrays).analyzer.dotted_names is False  # not today's default


def test_an_index_compiled_before_contractions_keeps_their_fragments() -> None:
    index = SearchIndex.compile(MARK_SAFE)
    meta = {**index._meta, "analyzer": {k: v for k, v in index._meta["analyzer"].items() if k != "contractions"}}

    assert SearchIndex.from_bytes(index.to_bytes()).analyzer.contractions is True
    assert SearchIndex(meta, index._arrays).analyzer.contractions is False


@pytest.fixture(scope="module")
def pylibs() -> Collection:
    return Collection("pylibs", load_documents("pylibs"), load_dev_queries("pylibs"))


def test_pylibs_dev_ndcg_holds_its_floor_and_the_default_idf_ranks_better_than_lucenes(pylibs: Collection) -> None:
    # nDCG@10 of the ranking itself (the gate open) over the covered dev questions
    default = pylibs.ndcg(pylibs.compile(Config("default")))
    lucene = pylibs.ndcg(pylibs.compile(Config("lucene", params=replace(BM25FParams(), idf_floor=None))))

    assert default >= 0.845  # 0.847 (the floored RSJ idf, dotted names' compound names whole); bm25s 0.809
    assert lucene >= 0.832  # 0.837
    assert default > lucene + 0.005

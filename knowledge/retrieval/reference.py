"""The reference ranker evaluations compare against: bm25s over title + body, packed greedily.

bm25s (https://github.com/xhluca/bm25s) with its English stopwords and the Snowball stemmer, or jieba
for Chinese, is the baseline the retrieval issues measure Evergreen against. It never refuses (every
question is answered as covered) and fills the budget in rank order. bm25s and jieba are test
dependencies (`pip install -e '.[test]'`): without them this module says so instead of failing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from knowledge.retrieval.evaluation import EvalQuestion, QueryOutcome

REFERENCE_DEPTH = 50  # ranked entries bm25s returns per question (the pack never needs more)
UNAVAILABLE = "bm25s is not installed (pip install -e '.[test]'); the reference column is left out."
_HAN = re.compile(r"[\u3400-\u9fff]")


class Searchable(Protocol):
    """What bm25s indexes of an entry (EntryRecord and Document both have it)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def tokens(self) -> int: ...


class ReferenceUnavailableError(RuntimeError):
    """bm25s (or jieba, for Chinese) is not installed."""


def _tokenizer(chinese: bool) -> Callable[[list[str]], Any]:
    try:
        import bm25s  # noqa: PLC0415  # optional: a test dependency
        import Stemmer  # noqa: PLC0415
    except ImportError as error:
        raise ReferenceUnavailableError(UNAVAILABLE) from error
    if chinese:
        try:
            import jieba  # noqa: PLC0415  # optional: a test dependency
        except ImportError as error:
            raise ReferenceUnavailableError(UNAVAILABLE) from error
        jieba.setLogLevel(60)
        return lambda texts: [[w for w in jieba.lcut(t) if w.strip()] for t in texts]
    stemmer = Stemmer.Stemmer("english")
    return lambda texts: bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)


def is_chinese(entries: Sequence[Searchable]) -> bool:
    """Whether most of the entries' text is Chinese (then bm25s gets jieba's words)."""
    sample = "".join(e.title + e.body[:200] for e in entries[:200])
    return len(_HAN.findall(sample)) * 3 > len(sample)


def pack_greedily(ranked: Sequence[tuple[str, int]], budget: int) -> list[str]:
    """Rank order, skip what does not fit (seed §4's packing without a relevance floor)."""
    packed: list[str] = []
    left = budget
    for entry_id, tokens in ranked:
        if tokens <= left:
            packed.append(entry_id)
            left -= tokens
    return packed


def reference_outcomes(
    entries: Sequence[Searchable],
    questions: Sequence[EvalQuestion],
    *,
    budget: int,
    depth: int = 10,
    chinese: bool | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[QueryOutcome]:
    """Each question through bm25s: its top `depth` ranked IDs and its greedy pack at `budget`."""
    import bm25s  # noqa: PLC0415  # _tokenizer has checked it is there

    tokenize = _tokenizer(is_chinese(entries) if chinese is None else chinese)
    retriever = bm25s.BM25()
    retriever.index(tokenize([e.title + " " + e.body for e in entries]), show_progress=False)
    outcomes = []
    for done, question in enumerate(questions, start=1):
        started = time.perf_counter()
        tokens = tokenize([question.text])
        positions: list[int] = []
        if not (isinstance(tokens, list) and tokens and not tokens[0]):
            found, _ = retriever.retrieve(
                tokens, k=min(REFERENCE_DEPTH, len(entries)), show_progress=False, n_threads=1
            )
            positions = [int(p) for p in found[0]]
        ranked = [(entries[p].id, entries[p].tokens) for p in positions]
        packed = pack_greedily(ranked, budget)
        tokens_of = dict(ranked)
        outcomes.append(
            QueryOutcome(
                query_id=question.key,
                relevant=question.relevant,
                ranked=[entry_id for entry_id, _ in ranked[:depth]],
                packed=packed,
                matched=True,
                seconds=time.perf_counter() - started,
                packed_tokens=tuple(tokens_of[i] for i in packed),
            )
        )
        if progress is not None:
            progress(done, len(questions))
    return outcomes

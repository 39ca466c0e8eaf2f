"""Dev-split quality of Evergreen's engine beside a bm25s reference, for both shared collections.

Run: .venv/bin/python -m bench.evaluate_datasets  (progress on stderr, the table on stdout)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.datasets import BUDGET, COLLECTIONS, EvalQuery, load_dev_queries, load_documents, pack_greedily, progress
from knowledge.retrieval.documents import Document
from knowledge.retrieval.evaluation import (
    EvaluationReport,
    QueryOutcome,
    calibrate_threshold,
    summarize_outcomes,
)
from knowledge.retrieval.index import DEFAULT_MATCH_THRESHOLD, SearchIndex, SearchOptions

TOP = 10


@dataclass(frozen=True)
class EngineRun:
    """Per query: the ranking ignoring the coverage gate, the answer when it is not covered (its
    best weak hits, or the confidence fallback when nothing hits), and the gate's score."""

    ranked: list[QueryOutcome]
    unmatched: list[QueryOutcome]
    match_scores: list[float]

    def served(self, threshold: float) -> list[QueryOutcome]:
        """Outcomes as /api/context serves them when the namespace's threshold is `threshold`."""
        return [
            ranked if score >= threshold else unmatched
            for ranked, unmatched, score in zip(self.ranked, self.unmatched, self.match_scores, strict=True)
        ]


def _outcome(
    index: SearchIndex, documents: Sequence[Document], query: EvalQuery, options: SearchOptions
) -> tuple[QueryOutcome, float]:
    started = time.perf_counter()
    ranking = index.search(query.text, options=options)
    ranked: list[str] = []
    candidates: list[tuple[str, int]] = []
    for hit in ranking:
        document = documents[hit.position]
        candidates.append((document.id, document.tokens))
        ranked.append(document.id)
        if len(ranked) >= TOP and sum(t for _, t in candidates) > BUDGET * 4:
            break
    packed = pack_greedily(candidates, BUDGET, ranking.min_tokens or 0)
    seconds = time.perf_counter() - started
    score = -math.inf if ranking.match_score is None else ranking.match_score
    outcome = QueryOutcome(query.id, query.relevant, ranked[:TOP], packed, ranking.matched, seconds)
    return outcome, score


def evaluate_engine(
    index: SearchIndex,
    documents: Sequence[Document],
    queries: Sequence[EvalQuery],
    *,
    ranker: str = "bm25f",
    label: str = "evergreen",
) -> EngineRun:
    """Each query through search + a greedy pack at BUDGET, as /api/context would serve it."""
    ranked, unmatched, scores = [], [], []
    ungated = SearchOptions(ranker=ranker, match_threshold=-math.inf)
    refusing = SearchOptions(ranker=ranker, match_threshold=math.inf)
    for i in progress(queries, label):
        outcome, score = _outcome(index, documents, queries[i], ungated)
        if ranker == "seed":
            score = math.inf if outcome.matched else -math.inf
        ranked.append(outcome)
        scores.append(score)
        unmatched.append(_outcome(index, documents, queries[i], refusing)[0])
    return EngineRun(ranked, unmatched, scores)


def _bm25s_tokenizer(collection: str) -> Callable[[list[str]], Any]:
    import jieba
    import Stemmer

    if collection == "cmrc2018":
        jieba.setLogLevel(60)
        return lambda texts: [[w for w in jieba.lcut(t) if w.strip()] for t in texts]
    import bm25s

    stemmer = Stemmer.Stemmer("english")
    return lambda texts: bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)


def evaluate_bm25s(collection: str, documents: Sequence[Document], queries: Sequence[EvalQuery]) -> list[QueryOutcome]:
    """The reference: bm25s (Snowball + English stopwords, or jieba for Chinese); never refuses."""
    import bm25s

    tokenize = _bm25s_tokenizer(collection)
    retriever = bm25s.BM25()
    retriever.index(tokenize([d.title + " " + d.body for d in documents]), show_progress=False)
    outcomes = []
    for i in progress(queries, "bm25s"):
        query = queries[i]
        started = time.perf_counter()
        tokens = tokenize([query.text])
        if isinstance(tokens, list) and tokens and not tokens[0]:
            positions: list[int] = []
        else:
            found, _ = retriever.retrieve(tokens, k=min(50, len(documents)), show_progress=False, n_threads=1)
            positions = [int(p) for p in found[0]]
        ranked = [(documents[p].id, documents[p].tokens) for p in positions]
        packed = pack_greedily(ranked, BUDGET)
        seconds = time.perf_counter() - started
        outcomes.append(QueryOutcome(query.id, query.relevant, [r for r, _ in ranked[:TOP]], packed, True, seconds))
    return outcomes


def format_report(collection: str, system: str, report: EvaluationReport) -> str:
    def cell(value: float | None) -> str:
        return "   -  " if value is None else f"{value:6.3f}"

    return (
        f"{collection:10} {system:18} {report.queries:5d} {cell(report.ndcg_at_10)} {cell(report.mrr_at_10)} "
        f"{cell(report.pack_recall)} {cell(report.hit_rate)} {cell(report.matched_when_covered)} "
        f"{cell(report.unmatched_when_uncovered)} {cell(report.latency_p50_ms)}"
    )


HEADER = (
    f"{'collection':10} {'system':18} {'dev q':>5} {'nDCG10':>6} {'MRR10':>6} {'recall':>6} {'hit':>6} "
    f"{'m|cov':>6} {'¬m|unc':>6} {'p50 ms':>6}"
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--collection", choices=COLLECTIONS, action="append")
    parser.add_argument("--no-reference", action="store_true", help="skip bm25s")
    parser.add_argument("--seed", action="store_true", help="also run the seed §4 ranker")
    args = parser.parse_args(argv)
    rows = []
    for collection in args.collection or COLLECTIONS:
        print(f"{collection}: compiling", file=sys.stderr, flush=True)
        documents = load_documents(collection)
        queries = load_dev_queries(collection)
        index = SearchIndex.compile(documents)
        run = evaluate_engine(index, documents, queries)
        covered = [s for q, s in zip(queries, run.match_scores, strict=True) if q.relevant]
        uncovered = [s for q, s in zip(queries, run.match_scores, strict=True) if not q.relevant]
        calibrated = calibrate_threshold(covered, uncovered)
        rows.append(
            format_report(collection, "evergreen default", summarize_outcomes(run.served(DEFAULT_MATCH_THRESHOLD)))
        )
        rows.append(
            format_report(collection, f"evergreen t={calibrated:.2f}", summarize_outcomes(run.served(calibrated)))
        )
        rows.append(format_report(collection, "evergreen ungated", summarize_outcomes(run.ranked)))
        if args.seed:
            seed = evaluate_engine(index, documents, queries, ranker="seed", label="seed")
            rows.append(format_report(collection, "seed formula*", summarize_outcomes(seed.served(0.0))))
        if not args.no_reference:
            rows.append(
                format_report(collection, "bm25s", summarize_outcomes(evaluate_bm25s(collection, documents, queries)))
            )
    print(f"dev split only, budget {BUDGET}; m|cov = matched on covered, ¬m|unc = not matched on uncovered")
    print("* seed formula = the §4 weights over Evergreen's analysed terms (bench/reference.py: substring original)")
    print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

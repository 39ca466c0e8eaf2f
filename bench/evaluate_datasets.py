"""Dev-split quality of Evergreen's engine beside bm25s on every development collection.

Run: .venv/bin/python -m bench.evaluate_datasets [--collection NAME] [--seed]
Progress goes to stderr, the table to stdout. Each collection is served as a new site would serve
it: the release's automatic threshold (no golden questions), relevance floors on the pack; beside
it the seed's packing (fill the budget) for filler before/after, and bm25s.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bench.datasets import BUDGET, COLLECTIONS, load_dev_queries, load_documents, progress
from knowledge.retrieval.calibration import threshold_automatic
from knowledge.retrieval.documents import Document
from knowledge.retrieval.evaluation import EvalQuestion, EvaluationReport, QueryOutcome, summarize_outcomes
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import pack_to_budget
from knowledge.retrieval.ranking import Ranking
from knowledge.retrieval.reference import reference_outcomes

TOP = 10


@dataclass(frozen=True)
class EngineRun:
    """Per question: the answer when the gate lets it match, the answer when it does not (the best
    weak hits, or the confidence fallback when nothing hits), and the gate score deciding."""

    matched: list[QueryOutcome]
    unmatched: list[QueryOutcome]
    gate_scores: list[float]

    def served(self, threshold: float) -> list[QueryOutcome]:
        """Outcomes as /api/context serves them when the release's threshold is `threshold`; nDCG
        and MRR stay those of the ranking itself (a weak answer lists only its best 3 hits)."""
        return [
            matched if score >= threshold else replace(unmatched, ranked=matched.ranked)
            for matched, unmatched, score in zip(self.matched, self.unmatched, self.gate_scores, strict=True)
        ]

    @property
    def ranked(self) -> list[QueryOutcome]:
        """Every question as matched: the ranking itself, whatever the gate says."""
        return self.matched


def _outcome(ranking: Ranking, documents: Sequence[Document], question: EvalQuestion, started: float) -> QueryOutcome:
    """One answer exactly as payload.context_pack packs it (relevance floors included)."""
    ranked = [documents[hit.position].id for hit, _ in zip(ranking, range(TOP), strict=False)]
    pack = pack_to_budget(
        ranking,
        tokens_of=lambda position: documents[position].tokens,
        budget=BUDGET,
        min_tokens=ranking.min_tokens,
        relevance=ranking.relevance,
    )
    packed = [documents[hit.position] for hit in pack.packed]
    return QueryOutcome(
        question.key,
        question.relevant,
        ranked,
        [d.id for d in packed],
        ranking.matched,
        time.perf_counter() - started,
        packed_tokens=tuple(d.tokens for d in packed),
    )


def evaluate_engine(
    index: SearchIndex,
    documents: Sequence[Document],
    questions: Sequence[EvalQuestion],
    *,
    ranker: str = "bm25f",
    packing: str = "relevant",
    label: str = "evergreen",
) -> EngineRun:
    """Each question through search + pack at BUDGET, with the gate open and shut."""
    matched, unmatched, scores = [], [], []
    opened = replace(index.options, ranker=ranker, packing=packing, match_threshold=-math.inf)
    shut = replace(opened, match_threshold=math.inf)
    for i in progress(questions, label):
        question = questions[i]
        started = time.perf_counter()
        ranking = index.search(question.text, options=opened)
        matched.append(_outcome(ranking, documents, question, started))
        score = -math.inf if ranking.gate_score is None else ranking.gate_score
        scores.append((math.inf if ranking.matched else -math.inf) if ranker == "seed" else score)
        started = time.perf_counter()
        unmatched.append(_outcome(index.search(question.text, options=shut), documents, question, started))
    return EngineRun(matched, unmatched, scores)


def evaluate_bm25s(documents: Sequence[Document], questions: Sequence[EvalQuestion]) -> list[QueryOutcome]:
    """The reference: bm25s (Snowball + English stopwords, or jieba for Chinese); never refuses."""
    ticks = iter(progress(questions, "bm25s"))
    next(ticks, None)

    def tick(done: int, total: int) -> None:
        next(ticks, None)

    return reference_outcomes(documents, questions, budget=BUDGET, depth=TOP, progress=tick)


def cell(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


HEADER = (
    f"{'collection':10} {'system':24} {'dev q':>5} {'nDCG10':>6} {'MRR10':>6} {'recall':>6} {'hit':>6} "
    f"{'m|cov':>6} {'¬m|unc':>6} {'filler':>6} {'p50 ms':>6}"
)


def format_report(collection: str, system: str, report: EvaluationReport) -> str:
    return (
        f"{collection:10} {system:24} {report.queries:5d} {cell(report.ndcg_at_10)} {cell(report.mrr_at_10)} "
        f"{cell(report.pack_recall)} {cell(report.hit_rate)} {cell(report.matched_when_covered)} "
        f"{cell(report.unmatched_when_uncovered)} {cell(report.filler)} {cell(report.latency_p50_ms)}"
    )


def collection_rows(collection: str, *, seed: bool, reference: bool, log: Callable[[str], None]) -> list[str]:
    log(f"{collection}: compiling and calibrating")
    documents = load_documents(collection)
    questions = load_dev_queries(collection)
    index = SearchIndex.compile(documents)
    automatic = threshold_automatic(index, documents)
    index = index.with_threshold(
        automatic.threshold, automatic.to_meta(), pack_best_share=automatic.pack_best_share, feedback=automatic.feedback
    )
    rows = []
    run = evaluate_engine(index, documents, questions)
    name = f"evergreen auto t={automatic.threshold:.2f} c={automatic.pack_best_share:g}"
    rows.append(format_report(collection, name, summarize_outcomes(run.served(automatic.threshold))))
    rows.append(format_report(collection, "evergreen ungated", summarize_outcomes(run.ranked)))
    filled = evaluate_engine(index, documents, questions, packing="seed", label="seed packing")
    rows.append(
        format_report(collection, "evergreen, seed packing", summarize_outcomes(filled.served(automatic.threshold)))
    )
    if seed:
        formula = evaluate_engine(index, documents, questions, ranker="seed", packing="seed", label="seed")
        rows.append(format_report(collection, "seed formula*", summarize_outcomes(formula.served(0.0))))
    if reference:
        rows.append(format_report(collection, "bm25s", summarize_outcomes(evaluate_bm25s(documents, questions))))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--collection", choices=COLLECTIONS, action="append")
    parser.add_argument("--no-reference", action="store_true", help="skip bm25s")
    parser.add_argument("--seed", action="store_true", help="also run the seed §4 ranker")
    args = parser.parse_args(argv)
    rows = []
    for collection in args.collection or COLLECTIONS:
        rows += collection_rows(
            collection,
            seed=args.seed,
            reference=not args.no_reference,
            log=lambda message: print(message, file=sys.stderr, flush=True),
        )
    print(f"dev split only, budget {BUDGET}; m|cov = matched on covered, ¬m|unc = not matched on uncovered,")
    print("filler = share of packed tokens in no relevant entry (covered questions); auto = the threshold a")
    print("release build calibrates from the entries and the built-in probes (no golden questions)")
    print("* seed formula = the §4 weights over Evergreen's analysed terms (bench/reference.py: substring original)")
    print(HEADER)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

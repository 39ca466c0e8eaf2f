"""Retrieval quality metrics over plain data: nDCG@10, MRR@10, pack recall, hit rate, refusals, filler;
and evaluation questions in the format of ../shared/datasets/*/queries.jsonl."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class QueryOutcome:
    """What the engine answered for one evaluation query.

    `relevant` maps entry ID -> graded relevance (> 0); empty means the knowledge base does not
    cover the question. `ranked` is the ranking as served (fallback entries included), `packed`
    the IDs that fit the token budget, `matched` the served flag.
    """

    query_id: str
    relevant: Mapping[str, int]
    ranked: Sequence[str]
    packed: Sequence[str]
    matched: bool
    seconds: float = 0.0
    packed_tokens: Sequence[int] = ()  # the cost of each packed entry, in `packed` order
    # How far the served `matched` was from flipping (knowledge.retrieval.gate.decision_margin):
    # >= 0 matched, < 0 refused; None when no entry shares a word with the question.
    margin: float | None = None

    @property
    def covered(self) -> bool:
        return any(grade > 0 for grade in self.relevant.values())


@dataclass(frozen=True)
class EvaluationReport:
    """Averages over covered queries, refusal shares, and latency; `None` where nothing to average."""

    queries: int
    covered: int
    uncovered: int
    ndcg_at_10: float | None
    mrr_at_10: float | None
    pack_recall: float | None
    hit_rate: float | None
    matched_when_covered: float | None
    unmatched_when_uncovered: float | None
    filler: float | None
    latency_p50_ms: float | None
    latency_p99_ms: float | None


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """nDCG with linear gains (grade) and log2 discounts, as trec_eval's ndcg_cut computes it."""
    gains = [relevant.get(entry_id, 0) for entry_id in ranked[:k]]
    dcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(gains) if gain > 0)
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def reciprocal_rank_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """1 / rank of the first relevant entry within the top k, else 0."""
    for rank, entry_id in enumerate(ranked[:k], start=1):
        if relevant.get(entry_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def pack_recall(packed: Sequence[str], relevant: Mapping[str, int]) -> float:
    """Share of the relevant entries that made it into the budgeted pack."""
    wanted = {entry_id for entry_id, grade in relevant.items() if grade > 0}
    return len(wanted.intersection(packed)) / len(wanted) if wanted else 0.0


def is_hit(packed: Sequence[str], relevant: Mapping[str, int]) -> bool:
    """Whether any relevant entry is inside the pack."""
    return any(relevant.get(entry_id, 0) > 0 for entry_id in packed)


def filler_share(outcome: QueryOutcome) -> float | None:
    """Share of the packed tokens that belong to no relevant entry (None: nothing packed)."""
    total = sum(outcome.packed_tokens)
    if not total:
        return None
    wasted = sum(
        t for entry_id, t in zip(outcome.packed, outcome.packed_tokens, strict=True) if entry_id not in outcome.relevant
    )
    return wasted / total


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _percentile_ms(seconds: Sequence[float], q: float) -> float | None:
    return float(np.percentile(seconds, q) * 1000) if seconds else None


def summarize_outcomes(outcomes: Sequence[QueryOutcome]) -> EvaluationReport:
    """Quality metrics average over covered queries; refusal is measured on uncovered ones."""
    covered = [o for o in outcomes if o.covered]
    uncovered = [o for o in outcomes if not o.covered]
    return EvaluationReport(
        queries=len(outcomes),
        covered=len(covered),
        uncovered=len(uncovered),
        ndcg_at_10=_mean([ndcg_at_k(o.ranked, o.relevant) for o in covered]),
        mrr_at_10=_mean([reciprocal_rank_at_k(o.ranked, o.relevant) for o in covered]),
        pack_recall=_mean([pack_recall(o.packed, o.relevant) for o in covered]),
        hit_rate=_mean([float(is_hit(o.packed, o.relevant)) for o in covered]),
        matched_when_covered=_mean([float(o.matched) for o in covered]),
        unmatched_when_uncovered=_mean([float(not o.matched) for o in uncovered]),
        # Over covered questions with a non-empty pack: on an uncovered one every token is filler.
        filler=_mean([share for o in covered if (share := filler_share(o)) is not None]),
        latency_p50_ms=_percentile_ms([o.seconds for o in outcomes], 50),
        latency_p99_ms=_percentile_ms([o.seconds for o in outcomes], 99),
    )


def calibrate_threshold(covered: Sequence[float], uncovered: Sequence[float], *, min_matched: float = 0.95) -> float:
    """The match threshold that refuses the most uncovered questions while still matching at
    least `min_matched` of the covered ones; with no uncovered examples, nothing is refused (0).

    Scores are `Ranking.match_score` values (None/absent scores are simply not passed).
    """
    if not covered or not uncovered:
        return 0.0
    ordered = np.sort(np.asarray(covered, dtype=np.float64))
    # Highest t with share(covered >= t) >= min_matched: the k-th smallest covered score.
    allowed_misses = math.floor(len(ordered) * (1.0 - min_matched) + 1e-9)
    return float(ordered[min(allowed_misses, len(ordered) - 1)])


MIN_MARGIN = 0.005


def calibration_margin(*, target: float, covered: int) -> float:
    """How much above `target` to calibrate so that unseen questions still reach it: the one-sided
    95 % binomial error of a share measured on `covered` questions (at least half a point)."""
    return max(MIN_MARGIN, 1.645 * math.sqrt(target * (1 - target) / max(covered, 1)))


class QuestionFileError(ValueError):
    """Lines of a questions file that are not {id, text, relevant, split?} objects."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        super().__init__(f"{len(errors)} bad line(s)")
        self.errors = errors


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    """One question: the entries that answer it ({id: grade > 0}), or {} when nothing covers it."""

    key: str
    text: str
    relevant: dict[str, int]
    split: str = "dev"


def _question(row: object) -> EvalQuestion:
    if not isinstance(row, dict):
        raise ValueError("expected a JSON object")
    key, text, relevant = row.get("id"), row.get("text"), row.get("relevant", {})
    if not isinstance(key, str) or not key:
        raise ValueError('"id" must be a non-empty string')
    if not isinstance(text, str) or not text.strip():
        raise ValueError('"text" must be a non-empty string')
    if not isinstance(relevant, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in relevant.items()
    ):
        raise ValueError('"relevant" must map entry IDs to integer grades')
    return EvalQuestion(
        key=key,
        text=text,
        relevant={k: v for k, v in relevant.items() if v > 0},
        split=str(row.get("split", "dev")),
    )


def questions_parse(lines: Iterable[str], *, split: str | None = None) -> list[EvalQuestion]:
    """Questions in the format of ../shared/datasets/*/queries.jsonl; only `split` when given.

    A line of another split is dropped as soon as its split is known, before anything else of it
    is looked at: a held-out split is never evaluated. Raises QuestionFileError for bad lines.
    """
    questions: list[EvalQuestion] = []
    errors: list[tuple[int, str]] = []
    for line_no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            if split is not None and isinstance(row, dict) and str(row.get("split", "dev")) != split:
                continue
            questions.append(_question(row))
        except (json.JSONDecodeError, ValueError) as error:
            errors.append((line_no, str(error)))
    if errors:
        raise QuestionFileError(errors)
    return questions

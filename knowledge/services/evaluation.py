"""Evaluation questions run through /api/context's own ranking and packing, recorded as runs; and the
calibration of a namespace's match threshold from its questions (issue 5)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.db import transaction

from knowledge.actors import Actor
from knowledge.models import EvaluationRun, Namespace, Release
from knowledge.retrieval.evaluation import (
    EvalQuestion,
    EvaluationReport,
    QueryOutcome,
    calibrate_threshold,
    calibration_margin,
    summarize_outcomes,
)
from knowledge.retrieval.gate import decision_margin
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import clamp_budget
from knowledge.retrieval.payload import ContextQuery, context_pack, context_payload
from knowledge.retrieval.reference import reference_outcomes
from knowledge.selectors.serving import LoadedRelease
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build

RANKED_DEPTH = 10  # nDCG@10 and MRR@10 read the first ten hits of the ranking
TOPIC_MAX = 500  # /api/context refuses longer topics (gateway.params); evaluation cuts them there
SEED_HAS_NO_THRESHOLD = "The seed ranker matches on any hit; only the bm25f ranker has a match threshold."
NO_QUESTIONS = "No questions to evaluate."
NO_COVERED = "Calibration needs covered questions (relevant entries given)."
NO_UNCOVERED = "No uncovered questions (relevant {}): nothing to refuse, so the threshold is 0 (every hit matches)."


@dataclass(frozen=True)
class Evaluation:
    """The summary, and per question what was served."""

    report: EvaluationReport
    outcomes: list[QueryOutcome]
    questions: list[EvalQuestion]
    modes: list[str]
    budget: int

    def metrics(self) -> dict[str, Any]:
        """What an EvaluationRun stores and /metrics.json shows: rounded, JSON-safe."""
        values = {
            name: (round(value, 4) if isinstance(value, float) else value)
            for name, value in asdict(self.report).items()
        }
        return {**values, "budget": self.budget}

    def results(self) -> list[dict[str, Any]]:
        return [
            {
                "key": question.key,
                "text": question.text,
                "split": question.split,
                "expected": question.relevant,
                "packed": list(outcome.packed),
                "ranked": list(outcome.ranked),
                "matched": outcome.matched,
                "mode": mode,
                "ms": round(outcome.seconds * 1000, 3),
            }
            for question, outcome, mode in zip(self.questions, self.outcomes, self.modes, strict=True)
        ]


@dataclass(frozen=True)
class Calibration:
    """A threshold and what it does on the questions it was calibrated on."""

    threshold: float
    covered: int
    uncovered: int
    matched_when_covered: float
    unmatched_when_uncovered: float | None
    note: str = ""
    margin: float = 0.0  # added to the target share, so that unseen questions still reach it
    target: float = 0.0  # the share of covered questions asked for

    @property
    def below_target(self) -> bool:
        """No threshold reaches the target (covered questions that no entry can match at any threshold)."""
        return self.matched_when_covered < self.target - 1e-9


def _outcome(release: LoadedRelease, question: EvalQuestion, budget: int) -> tuple[QueryOutcome, str]:
    """One question as /api/context answers it: the same ranking, packing and payload."""
    query = ContextQuery(topic=question.text.strip()[:TOPIC_MAX], budget=budget, category=None)
    started = time.perf_counter()
    ranking, pack = context_pack(index=release.index, view=release.view, query=query)
    document = context_payload(query=query, ranking=ranking, pack=pack, view=release.view)
    seconds = time.perf_counter() - started
    entries = release.view.entries
    margin = decision_margin(release.index, ranking)
    if ranking.mode == "weak":  # nDCG and MRR measure the ranking itself, not the three weak hits served
        ranking = release.index.search(query.topic, options=replace(release.index.options, match_threshold=-math.inf))
    ranked = [entries[hit.position].id for hit, _ in zip(ranking, range(RANKED_DEPTH), strict=False)]
    outcome = QueryOutcome(
        query_id=question.key,
        relevant=question.relevant,
        ranked=ranked,
        packed=[entry["id"] for entry in document["entries"]],
        matched=bool(document["matched"]),
        seconds=seconds,
        packed_tokens=tuple(entry["tokens"] for entry in document["entries"]),
        margin=margin,
    )
    return outcome, ranking.mode


def questions_evaluate(
    *,
    release: LoadedRelease,
    questions: Sequence[EvalQuestion],
    budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """Every question through the release as it serves /api/context (its own threshold and ranker)."""
    if not questions:
        raise ValueError(NO_QUESTIONS)
    budget = clamp_budget(budget)
    _outcome(release, questions[0], budget)  # warm-up: the segmenter loads its dictionary on first use
    outcomes: list[QueryOutcome] = []
    modes: list[str] = []
    for done, question in enumerate(questions, start=1):
        outcome, mode = _outcome(release, question, budget)
        outcomes.append(outcome)
        modes.append(mode)
        if progress is not None:
            progress(done, len(questions))
    return Evaluation(summarize_outcomes(outcomes), outcomes, list(questions), modes, budget)


def reference_evaluate(
    *,
    release: LoadedRelease,
    questions: Sequence[EvalQuestion],
    budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """The same questions through bm25s over the release's entries (raises ReferenceUnavailableError)."""
    budget = clamp_budget(budget)
    outcomes = reference_outcomes(release.view.entries, questions, budget=budget, progress=progress)
    return Evaluation(summarize_outcomes(outcomes), outcomes, list(questions), ["reference"] * len(outcomes), budget)


def evaluation_run_record(*, namespace: Namespace, release: Release, evaluation: Evaluation) -> EvaluationRun:
    """Store a run: /metrics.json shows the latest, the admin shows every one with its questions."""
    return EvaluationRun.objects.create(
        namespace=namespace,
        release=release,
        metrics=evaluation.metrics(),
        results=evaluation.results(),
    )


def match_scores(*, index: SearchIndex, questions: Sequence[EvalQuestion]) -> list[float]:
    """Each question's gate score with the gate open: -inf where no entry has any of its words or
    the best entry holds too little of it to ever match (the coverage floor)."""
    options = index.options
    if options.ranker != "bm25f":
        raise ValueError(SEED_HAS_NO_THRESHOLD)
    ungated = replace(options, match_threshold=-math.inf, expand=False)
    scores = []
    for question in questions:
        ranking = index.search(question.text.strip()[:TOPIC_MAX], options=ungated)
        scores.append(-math.inf if ranking.gate_score is None else ranking.gate_score)
    return scores


def threshold_calibrate(
    *, index: SearchIndex, questions: Sequence[EvalQuestion], target_matched: float = 0.95
) -> Calibration:
    """The highest threshold that matches `target_matched` of the covered questions, with a margin.

    Landing exactly on the target leaves unseen questions below it half of the time, so the share
    aimed at is the target plus calibration_margin. Without uncovered questions nothing says how
    much refusing is worth, so nothing is refused: 0, as evaluation.calibrate_threshold decides
    (Cranfield's dev split is such a set).
    """
    scores = match_scores(index=index, questions=questions)
    covered = [s for q, s in zip(questions, scores, strict=True) if q.relevant]
    uncovered = [s for q, s in zip(questions, scores, strict=True) if not q.relevant]
    if not covered:
        raise ValueError(NO_COVERED)
    margin = calibration_margin(target=target_matched, covered=len(covered))
    # Never below 0: the coverage penalty refuses a topic the best entry mostly lacks by a negative
    # gate score (index.MATCH_COVERAGE_FLOOR), which a threshold below 0 would let through.
    threshold = max(0.0, calibrate_threshold(covered, uncovered, min_matched=min(1.0, target_matched + margin)))
    return Calibration(
        threshold=threshold,
        covered=len(covered),
        uncovered=len(uncovered),
        matched_when_covered=sum(s >= threshold for s in covered) / len(covered),
        unmatched_when_uncovered=sum(s < threshold for s in uncovered) / len(uncovered) if uncovered else None,
        note="" if uncovered else NO_UNCOVERED,
        margin=margin,
        target=target_matched,
    )


@transaction.atomic
def namespace_match_threshold_set(
    *, namespace: Namespace, threshold: float | None, actor: Actor, note: str = ""
) -> Namespace:
    """Store the threshold and queue a release build: the index applies it from the next release."""
    locked = Namespace.objects.select_for_update().get(pk=namespace.pk)
    previous = locked.match_threshold
    locked.match_threshold = threshold
    locked.match_threshold_note = note[:300] if threshold is not None else ""
    locked.save(update_fields=["match_threshold", "match_threshold_note"])
    audit_record(
        namespace=locked,
        actor=actor,
        action="set_match_threshold",
        note=f"{previous} -> {threshold}. {note}".strip(),
    )
    release_request_build(namespace=locked, reason="threshold")
    return locked

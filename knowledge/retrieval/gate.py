"""The publish gate's verdict: the golden questions answered by the serving release and by a candidate.

A candidate release regresses when a question the serving release answered (matched, with one of
its expected entries in the pack) is now refused, or loses an expected entry it had, or when the
hit rate over covered questions falls by more than the tolerance (two points). Any regression holds
the release: it is built but not activated until a reviewer accepts it with a written reason.
Questions the serving release did not answer cannot regress; improvements are listed, never held.

A question that sat on the `matched` boundary is not held for falling off it (BORDERLINE_BAND): every
publish moves every idf a little (one more entry changes the collection's size), so a question the
serving release answered by less than the band and the candidate refuses by less than it flips with
unrelated changes; the report lists it as borderline instead (docs/retrieval.md, "The publish gate
and the boundary").
Pure: no Django, so the verdict is decided the same way for a build and for a review-page preview.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from knowledge.retrieval.evaluation import EvalQuestion, QueryOutcome, is_hit
from knowledge.retrieval.index import MATCH_COVERAGE_FLOOR, SearchIndex
from knowledge.retrieval.ranking import Ranking

HIT_RATE_TOLERANCE: Final = 0.02  # two points of hit rate
REFUSED: Final = "refused"
LOST_EXPECTED: Final = "lost_expected"
HIT_RATE_DROP: Final = "hit_rate_drop"
_EPSILON: Final = 1e-9  # a drop of exactly two points is within the tolerance
# How far a one-entry publish moves a question's decision margin: measured on the demo's 80 golden
# questions over 20 unrelated one-entry publishes, |change| p50 0.0045, p95 0.035, p99 0.071 (the
# coverage penalty moves the gate score by 8x a coverage change; with the fixed floor before it,
# 0.002 / 0.0075 / 0.009 and a band of 0.01).
BORDERLINE_BAND: Final = 0.075


def decision_margin(index: SearchIndex, ranking: Ranking) -> float | None:
    """How far the ranking's `matched` is from flipping: its gate score over the threshold (>= 0
    matched, < 0 refused); below the coverage floor (gate score -inf), the best entry's coverage under
    it. None when no entry shares a word with the topic, or for the seed ranker (it matches on any hit)."""
    if ranking.facts is None or ranking.coverage is None or index.options.ranker != "bm25f":
        return None
    if not math.isfinite(ranking.facts.gate_score):
        return ranking.coverage.entry - MATCH_COVERAGE_FLOOR
    return ranking.facts.gate_score - index.match_threshold


@dataclass(frozen=True, slots=True)
class Answer:
    """What one release answered for a question: the served `matched` flag and the packed IDs."""

    matched: bool
    packed: tuple[str, ...]
    margin: float | None = field(default=None, compare=False)  # decision_margin; not part of the answer

    def to_json(self) -> dict[str, Any]:
        return {"matched": self.matched, "packed": list(self.packed), "margin": _rounded(self.margin)}


@dataclass(frozen=True, slots=True)
class QuestionChange:
    """One golden question before (the serving release) and after (the candidate)."""

    key: str
    text: str
    expected: tuple[str, ...]
    before: Answer
    after: Answer
    regression: str | None = None  # REFUSED or LOST_EXPECTED
    lost: tuple[str, ...] = ()  # expected entries packed before and not after
    borderline: bool = False  # refused now, but it sat on the boundary (BORDERLINE_BAND): not held

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def borderline_note(self) -> str:
        return (
            f"{self.key} sat on the matched boundary (margin {_signed(self.before.margin)} before, "
            f"{_signed(self.after.margin)} now, within ±{BORDERLINE_BAND}): refused now, not held."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "text": self.text,
            "expected": list(self.expected),
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "regression": self.regression,
            "lost": list(self.lost),
            "borderline": self.borderline,
            "changed": self.changed,
        }


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """Every question's before and after, the hit rates, and whether they hold the candidate."""

    questions: tuple[QuestionChange, ...]
    hit_rate_before: float | None
    hit_rate_after: float | None
    tolerance: float = HIT_RATE_TOLERANCE
    regressions: tuple[QuestionChange, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regressions", tuple(q for q in self.questions if q.regression))

    @property
    def hit_rate_dropped(self) -> bool:
        if self.hit_rate_before is None or self.hit_rate_after is None:
            return False
        return self.hit_rate_before - self.hit_rate_after > self.tolerance + _EPSILON

    @property
    def held(self) -> bool:
        return bool(self.regressions) or self.hit_rate_dropped

    @property
    def changed(self) -> tuple[QuestionChange, ...]:
        return tuple(q for q in self.questions if q.changed)

    @property
    def borderline(self) -> tuple[QuestionChange, ...]:
        return tuple(q for q in self.questions if q.borderline)

    def reasons(self) -> list[str]:
        """Why the candidate is held, one line per regression (empty when it passes)."""
        lines = []
        for question in self.regressions:
            if question.regression == REFUSED:
                lines.append(f"{question.key} was answered and is now refused (matched=false).")
            else:
                lines.append(f"{question.key} no longer packs {', '.join(question.lost)}.")
        if self.hit_rate_dropped:
            lines.append(
                f"Hit rate fell from {self.hit_rate_before:.1%} to {self.hit_rate_after:.1%} "
                f"(more than {self.tolerance:.0%})."
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "tolerance": {"hitRateDrop": self.tolerance, "borderlineBand": BORDERLINE_BAND},
            "hitRate": {"before": _rounded(self.hit_rate_before), "after": _rounded(self.hit_rate_after)},
            "held": self.held,
            "reasons": self.reasons(),
            "borderline": [q.borderline_note() for q in self.borderline],
            "questions": [q.to_json() for q in self.questions],
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def answers_differently(question: Mapping[str, Any]) -> bool:
    """Whether a reported question (QuestionChange.to_json) changed, a regression or not; reports kept
    before margins were recorded have no "changed" and compare the answers."""
    if question.get("regression") or question.get("borderline"):
        return True
    return bool(question.get("changed", question["before"] != question["after"]))


def _signed(value: float | None) -> str:
    return "none" if value is None else f"{value:+.4f}"


def on_the_boundary(before: Answer, after: Answer) -> bool:
    """Answered by less than the band and refused by less than it: a flip any publish may cause."""
    if before.margin is None or after.margin is None:
        return False
    return before.margin < BORDERLINE_BAND and after.margin >= -BORDERLINE_BAND


def expected_entries(relevant: Mapping[str, int]) -> tuple[str, ...]:
    """The entries that answer the question: those of its highest grade (2 = the answer)."""
    if not relevant:
        return ()
    top = max(relevant.values())
    return tuple(sorted(entry_id for entry_id, grade in relevant.items() if grade == top))


def _question_change(question: EvalQuestion, before: QueryOutcome, after: QueryOutcome) -> QuestionChange:
    expected = expected_entries(question.relevant)
    was = Answer(matched=before.matched, packed=tuple(before.packed), margin=before.margin)
    now = Answer(matched=after.matched, packed=tuple(after.packed), margin=after.margin)
    answered = bool(expected) and was.matched and is_hit(was.packed, question.relevant)
    if not answered:
        return QuestionChange(question.key, question.text, expected, was, now)
    if not now.matched:
        if on_the_boundary(was, now):
            return QuestionChange(question.key, question.text, expected, was, now, borderline=True)
        return QuestionChange(question.key, question.text, expected, was, now, REFUSED)
    lost = tuple(entry_id for entry_id in expected if entry_id in was.packed and entry_id not in now.packed)
    return QuestionChange(question.key, question.text, expected, was, now, LOST_EXPECTED if lost else None, lost)


def _hit_rate(questions: Sequence[EvalQuestion], outcomes: Sequence[QueryOutcome]) -> float | None:
    hits = [is_hit(o.packed, q.relevant) for q, o in zip(questions, outcomes, strict=True) if q.relevant]
    return sum(hits) / len(hits) if hits else None


def gate_verdict(
    questions: Sequence[EvalQuestion],
    before: Sequence[QueryOutcome],
    after: Sequence[QueryOutcome],
    *,
    tolerance: float = HIT_RATE_TOLERANCE,
) -> GateVerdict:
    """Compare the serving release's answers (`before`) with the candidate's (`after`), question by question."""
    changes = tuple(_question_change(q, b, a) for q, b, a in zip(questions, before, after, strict=True))
    return GateVerdict(
        questions=changes,
        hit_rate_before=_hit_rate(questions, before),
        hit_rate_after=_hit_rate(questions, after),
        tolerance=tolerance,
    )

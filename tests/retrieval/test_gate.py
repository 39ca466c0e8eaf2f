"""The publish gate's verdict on golden questions: what holds a candidate release and what does not."""

from __future__ import annotations

from knowledge.retrieval.evaluation import EvalQuestion, QueryOutcome
from knowledge.retrieval.gate import (
    BORDERLINE_BAND,
    HIT_RATE_TOLERANCE,
    LOST_EXPECTED,
    REFUSED,
    answers_differently,
    expected_entries,
    gate_verdict,
)


def question(key: str, relevant: dict[str, int]) -> EvalQuestion:
    return EvalQuestion(key=key, text=f"question {key}", relevant=relevant, split="dev")


def outcome(q: EvalQuestion, packed: list[str], *, matched: bool = True, margin: float | None = None) -> QueryOutcome:
    return QueryOutcome(
        query_id=q.key, relevant=q.relevant, ranked=packed, packed=packed, matched=matched, margin=margin
    )


def test_the_same_answers_pass_and_change_nothing() -> None:
    q = question("q1", {"EG-001": 2})
    verdict = gate_verdict([q], [outcome(q, ["EG-001"])], [outcome(q, ["EG-001"])])
    assert not verdict.held
    assert verdict.changed == ()
    assert verdict.reasons() == []


def test_an_answered_question_now_refused_holds() -> None:
    q = question("q1", {"EG-001": 2})
    verdict = gate_verdict([q], [outcome(q, ["EG-001"])], [outcome(q, ["EG-002"], matched=False)])
    assert verdict.held
    assert [r.regression for r in verdict.regressions] == [REFUSED]
    assert "q1 was answered and is now refused" in verdict.reasons()[0]


def test_losing_an_expected_entry_holds_even_when_another_relevant_one_stays() -> None:
    q = question("q1", {"EG-001": 2, "EG-005": 1})
    verdict = gate_verdict([q], [outcome(q, ["EG-001", "EG-005"])], [outcome(q, ["EG-005", "EG-009"])])
    assert verdict.held
    change = verdict.regressions[0]
    assert (change.regression, change.lost) == (LOST_EXPECTED, ("EG-001",))
    assert verdict.to_json()["questions"][0]["before"] == {
        "matched": True,
        "packed": ["EG-001", "EG-005"],
        "margin": None,
    }


def test_a_related_entry_moving_out_of_the_pack_is_a_change_not_a_regression() -> None:
    q = question("q1", {"EG-001": 2, "EG-005": 1})
    verdict = gate_verdict([q], [outcome(q, ["EG-001", "EG-005"])], [outcome(q, ["EG-001"])])
    assert not verdict.held
    assert [c.key for c in verdict.changed] == ["q1"]


def test_questions_that_were_not_answered_cannot_regress() -> None:
    uncovered = question("nothing", {})
    missed = question("missed", {"EG-001": 2})
    before = [outcome(uncovered, [], matched=False), outcome(missed, ["EG-003"], matched=True)]
    after = [outcome(uncovered, ["EG-004"]), outcome(missed, [], matched=False)]
    assert not gate_verdict([uncovered, missed], before, after).held


def test_the_hit_rate_may_fall_by_two_points_and_no_more() -> None:
    """50 covered questions: one lost hit is two points exactly; a question that was a hit without a
    match (weak mode) is no answered question, so only the hit rate can hold it."""
    questions = [question(f"q{n:02}", {f"EG-{n:03}": 2}) for n in range(50)]
    before = [outcome(q, [next(iter(q.relevant))], matched=False) for q in questions]
    one_lost = [outcome(q, [] if n == 0 else [next(iter(q.relevant))], matched=False) for n, q in enumerate(questions)]
    two_lost = [outcome(q, [] if n < 2 else [next(iter(q.relevant))], matched=False) for n, q in enumerate(questions)]
    assert HIT_RATE_TOLERANCE == 0.02
    within = gate_verdict(questions, before, one_lost)
    assert (within.hit_rate_before, within.hit_rate_after, within.held) == (1.0, 0.98, False)
    beyond = gate_verdict(questions, before, two_lost)
    assert beyond.held and beyond.regressions == ()
    assert "Hit rate fell from 100.0% to 96.0%" in beyond.reasons()[0]


def test_the_expected_entries_are_those_of_the_highest_grade() -> None:
    assert expected_entries({"EG-002": 1, "EG-001": 2, "EG-003": 2}) == ("EG-001", "EG-003")
    assert expected_entries({"EG-002": 1}) == ("EG-002",)
    assert expected_entries({}) == ()


def test_a_question_that_sat_on_the_boundary_is_listed_as_borderline_and_not_held() -> None:
    q = question("q1", {"EG-001": 2})
    before = outcome(q, ["EG-001"], margin=0.0007)
    after = outcome(q, ["EG-001"], matched=False, margin=-0.0034)
    verdict = gate_verdict([q], [before], [after])
    assert not verdict.held and verdict.regressions == ()
    assert [c.key for c in verdict.borderline] == ["q1"] and [c.key for c in verdict.changed] == ["q1"]
    report = verdict.to_json()
    assert report["borderline"] == [
        f"q1 sat on the matched boundary (margin +0.0007 before, -0.0034 now, within ±{BORDERLINE_BAND}): "
        "refused now, not held."
    ]
    assert answers_differently(report["questions"][0])


def test_a_question_answered_clearly_or_refused_clearly_still_holds() -> None:
    q = question("q1", {"EG-001": 2})
    clear_before = gate_verdict(
        [q], [outcome(q, ["EG-001"], margin=0.3)], [outcome(q, [], matched=False, margin=-0.005)]
    )
    clear_after = gate_verdict(
        [q], [outcome(q, ["EG-001"], margin=0.005)], [outcome(q, [], matched=False, margin=-BORDERLINE_BAND - 0.001)]
    )
    unknown = gate_verdict([q], [outcome(q, ["EG-001"])], [outcome(q, [], matched=False)])
    for verdict in (clear_before, clear_after, unknown):
        assert verdict.held and [r.regression for r in verdict.regressions] == [REFUSED]


def test_a_margin_that_moves_is_no_change() -> None:
    q = question("q1", {"EG-001": 2})
    verdict = gate_verdict([q], [outcome(q, ["EG-001"], margin=0.2)], [outcome(q, ["EG-001"], margin=0.19)])
    assert verdict.changed == () and not answers_differently(verdict.to_json()["questions"][0])

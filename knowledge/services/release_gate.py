"""The publish gate: a release becomes active only if the namespace's golden questions do not regress.

Every build (Celery, `build_release`, a publish from the management API) runs the golden questions
through the serving release and through the candidate, as /api/context would answer them, before it
activates anything (knowledge.retrieval.gate decides). A held release is stored but not served; the
previous release keeps serving until a reviewer activates it (knowledge.services.gate_override).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Final

from knowledge.models import GateStatus, Namespace, Release, ReleaseActivation, ReleaseGate
from knowledge.retrieval.evaluation import EvalQuestion, QueryOutcome
from knowledge.retrieval.gate import GateVerdict, gate_verdict
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render.release import CONTEXT_JSON, SITE_JSON, RenderedArtifact
from knowledge.retrieval.render.site import snapshot_from_artifacts
from knowledge.selectors.evaluation import golden_questions_list, release_for_evaluation
from knowledge.selectors.serving import LoadedRelease, release_in_memory
from knowledge.services.evaluation import questions_evaluate

HELD_CODE: Final = "release_held"  # in build outcomes, command output and the management API


@dataclass(frozen=True)
class GateCheck:
    """The gate's decision on a candidate, before anything is stored."""

    status: str  # GateStatus
    compared_with: Release | None
    verdict: GateVerdict | None = None
    note: str = ""

    @property
    def held(self) -> bool:
        return self.status == GateStatus.HELD

    def summary(self) -> str:
        if self.verdict is None:
            return self.note
        borderline = " ".join(q.borderline_note() for q in self.verdict.borderline)
        if self.held:
            return " ".join(["Held by the golden questions:", *self.verdict.reasons(), borderline]).strip()
        passed = f"Golden questions passed ({len(self.verdict.changed)} of {len(self.verdict.questions)} changed)."
        return f"{passed} {borderline}".strip()


def release_gate_check(*, namespace: Namespace, candidate: Callable[[], LoadedRelease]) -> GateCheck:
    """Run the golden questions through the serving release and the candidate and compare them.

    Nothing to compare with (no serving release yet, or no golden questions) lets the candidate pass;
    the candidate is loaded only when there is (at 100,000 entries, loading it is most of a build's memory).
    """
    # The serving release without its manifest and metrics (megabytes of JSON at scale; not read here).
    active = (
        Namespace.objects.select_related("active_release")
        .defer("active_release__manifest_stored", "active_release__metrics")
        .get(pk=namespace.pk)
        .active_release
    )
    if active is None:
        return GateCheck(GateStatus.SKIPPED, None, note="No release served yet: nothing to compare with.")
    golden = golden_questions_list(namespace=namespace)
    if not golden:
        return GateCheck(GateStatus.SKIPPED, active, note="The namespace has no golden questions.")
    loaded = candidate()
    questions = without_withdrawn(golden, withdrawn=loaded.tombstones.keys())
    if not questions:
        return GateCheck(GateStatus.SKIPPED, active, note="The namespace has no golden questions.")
    budget = namespace.default_budget
    before = serving_outcomes(active, questions, budget)
    after = questions_evaluate(release=loaded, questions=questions, budget=budget)
    verdict = gate_verdict(questions, before, after.outcomes)
    return GateCheck(GateStatus.HELD if verdict.held else GateStatus.PASSED, active, verdict)


def without_withdrawn(questions: list[EvalQuestion], *, withdrawn: Iterable[str]) -> list[EvalQuestion]:
    """The questions as the candidate can answer them: an entry it retires or replaces was withdrawn by a
    reviewed change, so losing it is that change's point, not a regression. A question that expected only
    withdrawn entries is left out of the comparison (rather than becoming one that nothing covers)."""
    gone = set(withdrawn)
    kept: list[EvalQuestion] = []
    for question in questions:
        relevant = {entry: grade for entry, grade in question.relevant.items() if entry not in gone}
        if relevant or not question.relevant:
            kept.append(replace(question, relevant=relevant))
    return kept


def serving_outcomes(active: Release, questions: list[EvalQuestion], budget: int) -> list[QueryOutcome]:
    """The serving release's answers, evaluated once per process while it serves and the questions stay:
    a burst of builds evaluates only its candidates (kept with the loaded release, which never changes)."""
    serving = release_for_evaluation(release=active)
    asked = tuple((q.key, q.text, tuple(sorted(q.relevant.items()))) for q in questions)
    return serving.memoized(
        ("golden-gate", budget, asked),
        lambda: questions_evaluate(release=serving, questions=questions, budget=budget).outcomes,
    )


def release_gate_record(*, release: Release, check: GateCheck, now: datetime) -> ReleaseGate:
    """Keep the check with the release (inside the build's transaction); a rebuilt release is checked again."""
    gate, _ = ReleaseGate.objects.update_or_create(
        release=release,
        defaults={
            "status": check.status,
            "compared_with": check.compared_with,
            "report": check.verdict.to_json() if check.verdict else {"note": check.note},
            "regressions": len(check.verdict.regressions) if check.verdict else 0,
            "checked_at": now,
        },
    )
    return gate


def candidate_from_artifacts(artifacts: Sequence[RenderedArtifact], *, index: SearchIndex) -> LoadedRelease:
    """A rendered, not yet stored release loaded from its own files, exactly as serving would load it
    (`index`: its public index, as the host's workers will map it)."""
    files = {artifact.name: artifact.content for artifact in artifacts if artifact.name in (SITE_JSON, CONTEXT_JSON)}
    snapshot, stamp = snapshot_from_artifacts(site_json=files[SITE_JSON], context_json=files[CONTEXT_JSON])
    return release_in_memory(snapshot=snapshot, stamp=stamp, index=index)


def existing_release_check(*, namespace: Namespace, release: Release) -> GateCheck | None:
    """The gate for a build that reuses a stored release (same inputs): None when it need not run.

    A release that served before (the active one, one a rollback brings back, one a reviewer let
    through) is not checked again; a held one is, against what serves now (the golden questions may
    have been corrected meanwhile).
    """
    if ReleaseActivation.objects.filter(release=release).exists():
        return None
    return release_gate_check(namespace=namespace, candidate=partial(release_for_evaluation, release=release))

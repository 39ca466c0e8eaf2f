"""Which golden questions a version would change if it were published: the review page's preview.

The namespace's published content is compiled twice in memory — as it is, and with this version in
place of its entry's live one — and every golden question runs through both the way /api/context
answers it; the questions whose pack or `matched` differ are the ones the version changes, and a
regression among them is what the publish gate would hold. Both sides come from the same published
state, so nothing but this version explains a difference. Nothing is stored; the result is cached per
version content, published state and question set.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

import orjson
from django.core.cache import cache
from django.utils import timezone

from knowledge.models import EntryVersion, Namespace, VersionState
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.evaluation import EvalQuestion, QueryOutcome
from knowledge.retrieval.gate import answers_differently, gate_verdict
from knowledge.retrieval.render.release import AnalysisCache, References, references_from, tier_index
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot, without_dead_links
from knowledge.retrieval.tiers import visible
from knowledge.selectors.calibration import calibration_lineage
from knowledge.selectors.evaluation import golden_questions_list
from knowledge.selectors.serving import LoadedRelease, release_in_memory
from knowledge.selectors.snapshots import entry_record, snapshot_read
from knowledge.services.evaluation import questions_evaluate
from knowledge.services.release_gate import serving_outcomes

CACHE_SECONDS = 3600
FINISHED = (VersionState.PUBLISHED, VersionState.SUPERSEDED, VersionState.WITHDRAWN)
CACHE_KEY = "golden-preview:{version}:{digest}"


@dataclass(frozen=True)
class GoldenPreview:
    """The gate's report (GateVerdict.to_json) on publishing the version, or why there is nothing to preview."""

    report: dict[str, Any] | None
    note: str = ""

    @property
    def held(self) -> bool:
        return bool(self.report and self.report["held"])

    @property
    def changed(self) -> list[dict[str, Any]]:
        """The questions whose answer would change, regressions first."""
        questions = (self.report or {}).get("questions", [])
        moved = [q for q in questions if answers_differently(q)]
        return sorted(moved, key=lambda q: not q["regression"])


def _with_version(snapshot: Snapshot, version: EntryVersion) -> Snapshot:
    """The published state with `version` as its entry's live version (added when the entry is new)."""
    record = entry_record(entry=version.entry, version=version)
    entries = [e for e in snapshot.entries if e.id != record.id]
    position = next((i for i, e in enumerate(snapshot.entries) if e.id == record.id), len(entries))
    entries.insert(position, record)  # the same index positions for every other entry
    return replace(snapshot, entries=without_dead_links(entries))


def _in_memory(
    namespace: Namespace, snapshot: Snapshot, stamp: ReleaseStamp, analysis: AnalysisCache, references: References
) -> LoadedRelease:
    """The state compiled as a build would: the latest release's reference statistics, and the serving
    release's calibration carried when it holds."""
    lineage = calibration_lineage(namespace=namespace, snapshot=snapshot)
    index = tier_index(snapshot, stamp, PUBLIC, analysis=analysis, references=references, lineage=lineage)
    return release_in_memory(snapshot=visible(snapshot, PUBLIC), stamp=stamp, index=index)


def _published_outcomes(
    namespace: Namespace,
    published: Snapshot,
    questions: list[EvalQuestion],
    budget: int,
    stamp: ReleaseStamp,
    analysis: AnalysisCache,
    references: References,
) -> list[QueryOutcome]:
    """The golden answers of the published state: the serving release's (evaluated once per process,
    as the gate does) when it was built from exactly this state, else those of the state compiled here."""
    active = namespace.active_release
    if active is not None and active.inputs_hash == published.inputs_hash():
        return serving_outcomes(active, questions, budget)
    return questions_evaluate(
        release=_in_memory(namespace, published, stamp, analysis, references), questions=questions, budget=budget
    ).outcomes


def _digest(version: EntryVersion, questions: list[EvalQuestion], today: date) -> str:
    """What the preview depends on: the published state (the namespace's content serial moves with every
    publish, retirement and setting a release is built from), the version's content and the questions."""
    asked = [(q.key, q.text, sorted(q.relevant.items())) for q in questions]
    serial = version.entry.namespace.content_serial
    inputs = orjson.dumps([serial, today.isoformat(), version.content_hash, version.sensitivity, asked])
    return hashlib.sha256(inputs).hexdigest()[:32]


def golden_preview(*, version: EntryVersion) -> GoldenPreview:
    """The golden questions' answers before and after publishing `version`, as the gate compares them."""
    if version.state in FINISHED or version.entry.retired_at is not None:
        state = "retired" if version.entry.retired_at else version.get_state_display().lower()
        return GoldenPreview(None, f"This version is {state}: nothing to preview.")
    namespace = version.entry.namespace
    questions = golden_questions_list(namespace=namespace)
    if not questions:
        return GoldenPreview(None, "The namespace has no golden questions.")
    today = timezone.localdate()
    key = CACHE_KEY.format(version=version.pk, digest=_digest(version, questions, today))
    found = cache.get(key)
    if isinstance(found, dict):
        return GoldenPreview(found)
    published = snapshot_read(namespace=namespace, today=today)
    stamp = ReleaseStamp(sequence=0, knowledge_version="", revision=today.isoformat(), generated_at="")
    analysis = AnalysisCache()  # a second compile analyses only the changed entry again
    budget = namespace.default_budget
    # The next release's index keeps the reference statistics of the namespace's latest (issue 18); the
    # active release's are those unless a held release came after it (one query fewer: the admin's budget).
    active = namespace.active_release
    references = references_from(active.manifest) if active is not None else {}
    before = _published_outcomes(namespace, published, questions, budget, stamp, analysis, references)
    candidate = _in_memory(namespace, _with_version(published, version), stamp, analysis, references)
    after = questions_evaluate(release=candidate, questions=questions, budget=budget)
    report = gate_verdict(questions, before, after.outcomes).to_json()
    cache.set(key, report, CACHE_SECONDS)
    return GoldenPreview(report)

"""How well a namespace's releases answer their golden questions: the served release's evaluation and the trend."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Q, Subquery

from knowledge.models import EvaluationRun
from knowledge.retrieval.render.metric_definitions import metric_definitions
from knowledge.retrieval.timestamps import rfc3339
from knowledge.selectors.serving import LoadedRelease, release_metrics

TREND_RELEASES = 30  # the trend shows this many most recent evaluated releases


def _runs(namespace_id: int) -> Any:
    return EvaluationRun.objects.filter(namespace_id=namespace_id).filter(~Q(metrics={})).select_related("release")


def _described(run: EvaluationRun) -> dict[str, Any]:
    return {
        "runId": run.pk,
        "releaseId": run.release.sequence,
        "knowledgeVersion": run.release.knowledge_version,
        "measuredAt": rfc3339(run.created_at),
    }


def evaluation_report(*, namespace_id: int, release_id: int, sequence: int, knowledge_version: str) -> dict[str, Any]:
    """The evaluation /metrics.json reports: always of the release it serves (named even when not evaluated yet),
    with the latest run of any release beside it, so an older release's run is never taken for the served one's."""
    latest = _runs(namespace_id).order_by("-created_at", "-id").first()
    own = latest if latest is not None and latest.release_id == release_id else None
    if own is None and latest is not None:
        own = _runs(namespace_id).filter(release_id=release_id).order_by("-created_at", "-id").first()
    report: dict[str, Any] = {
        "releaseId": sequence,
        "knowledgeVersion": knowledge_version,
        "evaluated": own is not None,
        "runId": own.pk if own else None,
        "measuredAt": rfc3339(own.created_at) if own else None,
        "metrics": own.metrics if own else None,
        "latestRun": _described(latest) if latest is not None else None,
    }
    return report


def evaluation_trend(*, namespace_id: int, releases: int = TREND_RELEASES) -> list[dict[str, Any]]:
    """The latest run of each of the most recently evaluated releases, oldest release first (one query)."""
    newest_of_release = (
        EvaluationRun.objects.filter(release=OuterRef("release"))
        .filter(~Q(metrics={}))
        .order_by("-created_at", "-id")
        .values("pk")[:1]
    )
    runs = list(_runs(namespace_id).filter(pk=Subquery(newest_of_release)).order_by("-release__sequence")[:releases])
    return [{**_described(run), "metrics": run.metrics} for run in reversed(runs)]


def metrics_document(*, release: LoadedRelease, namespace_id: int) -> dict[str, Any]:
    """/metrics.json (REST and MCP): what the build measured, read once per loaded release, and the evaluation
    of that release."""
    measured = release.memoized("metrics", lambda: release_metrics(release_id=release.release_id))
    evaluation = evaluation_report(
        namespace_id=namespace_id,
        release_id=release.release_id,
        sequence=release.stamp.sequence,
        knowledge_version=release.stamp.knowledge_version,
    )
    definitions = metric_definitions(release.snapshot.namespace.language)
    return {**measured, "evaluation": evaluation, **definitions}

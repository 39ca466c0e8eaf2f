"""Reads for evaluation: a namespace's golden questions, and any of its releases loaded for serving."""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.errors import ServiceError
from knowledge.models import Artifact, GoldenQuestion, Namespace, Release
from knowledge.retrieval.evaluation import EvalQuestion
from knowledge.selectors.serving import LoadedRelease, release_cache_key, release_loaded

RELEASE_PRUNED = (
    "The files of release #{sequence} were pruned (retention policy, manage.py prune_releases), so it can no "
    "longer be evaluated; evaluate the active release or another that keeps its files."
)


class ReleasePrunedError(ServiceError):
    """The release's files are gone: the code and status (410) of a pinned read of such a release."""

    code = "release_expired"


def golden_questions_list(
    *, namespace: Namespace, split: str | None = None, keys: Iterable[str] | None = None
) -> list[EvalQuestion]:
    """The namespace's golden questions in key order; only one split, or only some keys, when asked."""
    rows = GoldenQuestion.objects.filter(namespace=namespace)
    if split is not None:
        rows = rows.filter(split=split)
    if keys is not None:
        rows = rows.filter(key__in=list(keys))
    return [
        EvalQuestion(
            key=row.key,
            text=row.text,
            relevant={k: int(v) for k, v in (row.relevant or {}).items() if int(v) > 0},
            split=row.split,
        )
        for row in rows.order_by("key")
    ]


def release_for_evaluation(*, release: Release) -> LoadedRelease:
    """A release as /api/context would serve it, active or not (the loaded-release cache of serving).

    Raises ReleasePrunedError for a release whose files were pruned, also when a prune commits between
    the check and the read. The check reads the row, not `release`: a build that renders a pruned release
    again (releases._serve_again) holds an instance that still says pruned; and it comes before the cache,
    so that no process answers from a copy it happens to hold.
    """
    pruned = Release.objects.filter(pk=release.pk, files_pruned_at__isnull=False).exists()
    if pruned:
        raise ReleasePrunedError(RELEASE_PRUNED.format(sequence=release.sequence))
    try:
        return release_loaded(release_id=release.pk, key=release_cache_key(release))
    except Artifact.DoesNotExist as error:
        raise ReleasePrunedError(RELEASE_PRUNED.format(sequence=release.sequence)) from error

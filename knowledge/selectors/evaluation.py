"""Reads for evaluation: a namespace's golden questions, and any of its releases loaded for serving."""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.models import GoldenQuestion, Namespace, Release
from knowledge.retrieval.evaluation import EvalQuestion
from knowledge.selectors.serving import LoadedRelease, release_cache_key, release_loaded


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
    """A release as /api/context would serve it, active or not (the loaded-release cache of serving)."""
    return release_loaded(release_id=release.pk, key=release_cache_key(release))

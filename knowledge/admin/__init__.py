"""The Django admin: the editors' and reviewers' home, scoped to each person's namespaces."""

from knowledge.admin import (
    access,
    content,
    entries,
    freshness,
    namespaces,
    observations,
    releases,
    requests,
    synonyms,
    texts,
    users,
    versions,
    webhooks,
)

__all__ = [
    "access",
    "content",
    "entries",
    "freshness",
    "namespaces",
    "observations",
    "releases",
    "requests",
    "synonyms",
    "texts",
    "users",
    "versions",
    "webhooks",
]

"""The Django admin: the editors' and reviewers' home, scoped to each person's namespaces."""

from knowledge.admin import (
    access,
    content,
    entries,
    namespaces,
    observations,
    releases,
    requests,
    synonyms,
    texts,
    versions,
    webhooks,
)

__all__ = [
    "access",
    "content",
    "entries",
    "namespaces",
    "observations",
    "releases",
    "requests",
    "synonyms",
    "texts",
    "versions",
    "webhooks",
]

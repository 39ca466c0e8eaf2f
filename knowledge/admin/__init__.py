"""The Django admin: the editors' and reviewers' home, scoped to each person's namespaces."""

from knowledge.admin import access, content, entries, namespaces, releases, versions

__all__ = ["access", "content", "entries", "namespaces", "releases", "versions"]

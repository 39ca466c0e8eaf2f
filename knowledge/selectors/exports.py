"""Entries in the import file format, for export_entries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from knowledge.models import Entry, Namespace


def entries_export_rows(*, namespace: Namespace, include_drafts: bool = False) -> Iterator[dict[str, Any]]:
    """One dict per live (or, with include_drafts, latest) version, in ID order; retired entries are left out."""
    entries = Entry.objects.filter(namespace=namespace, retired_at__isnull=True).select_related(
        "category", "live_version"
    )
    for entry in entries.order_by("number").iterator(chunk_size=1000):
        version = entry.live_version
        if include_drafts:
            version = entry.versions.order_by("-number").first()
        if version is None:
            continue
        trust: dict[str, Any] = {}
        if version.sensitivity != "public":
            trust["sensitivity"] = version.sensitivity
        if version.review_by is not None:
            trust["reviewBy"] = version.review_by.isoformat()
        if version.valid_until is not None:
            trust["validUntil"] = version.valid_until.isoformat()
        if version.paths:
            trust["paths"] = version.paths
        if version.overrides:
            trust["overrides"] = version.overrides
        yield {
            "id": entry.public_id,
            "title": version.title,
            "summary": version.summary,
            "body": version.body,
            "tags": version.tags,
            "aliases": version.aliases,
            "category": entry.category.slug,
            "confidence": float(version.confidence),
            "links": version.links,
            "updated": version.updated.isoformat(),
            **trust,
        }

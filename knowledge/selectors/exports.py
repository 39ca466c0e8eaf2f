"""Entries in the import file format, for export_entries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from knowledge.models import Entry, EntryVersion, Namespace
from knowledge.retrieval.timestamps import rfc3339


def entries_export_rows(
    *, namespace: Namespace, include_drafts: bool = False, include_retired: bool = False
) -> Iterator[dict[str, Any]]:
    """One dict per live (or, with include_drafts, latest) version, in ID order.

    With `include_retired`, a retired entry is a row too, its last served (else latest) content with
    `retiredAt`, `retireReason` and `replacedBy`: an import recreates its tombstone, so its ID keeps
    answering 410 and is never allocated again (seed §6). Without it they are left out (entry files).
    """
    entries = Entry.objects.filter(namespace=namespace).select_related("category", "live_version")
    if not include_retired:
        entries = entries.filter(retired_at__isnull=True)
    for entry in entries.order_by("number").iterator(chunk_size=1000):
        version = entry.live_version
        if include_drafts or (version is None and entry.retired_at is not None):
            version = entry.versions.order_by("-number").first()
        if version is None:
            continue
        yield {**_row(entry, version), **_tombstone(entry)}


def _row(entry: Entry, version: EntryVersion) -> dict[str, Any]:
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
    return {
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


def _tombstone(entry: Entry) -> dict[str, Any]:
    if entry.retired_at is None:
        return {}
    replacement = {"replacedBy": entry.replaced_by} if entry.replaced_by else {}
    return {"retiredAt": rfc3339(entry.retired_at), "retireReason": entry.retire_reason, **replacement}

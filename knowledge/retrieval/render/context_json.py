"""/context.json: the whole knowledge base, valid against /schemas/knowledge.schema.json."""

from __future__ import annotations

from typing import Any

import orjson

from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp, Snapshot, Tombstone

SCHEMA_PATH = "schemas/knowledge.schema.json"


def entry_payload(entry: EntryRecord, *, url: str) -> dict[str, Any]:
    """The public JSON of one entry, in the field order of seed §4 plus Evergreen's additions."""
    return {
        "id": entry.id,
        "category": entry.category,
        "title": entry.title,
        "summary": entry.summary,
        "body": entry.body,
        "tags": list(entry.tags),
        "confidence": entry.confidence,
        "tokens": entry.tokens,
        "updated": entry.updated,
        "version": entry.version,
        "contentHash": entry.content_hash,
        "links": list(entry.links),
        "url": url,
    }


def tombstone_payload(tombstone: Tombstone) -> dict[str, Any]:
    return {
        "id": tombstone.id,
        "title": tombstone.title,
        "retiredAt": tombstone.retired_at,
        "reason": tombstone.reason,
        "replacedBy": tombstone.replaced_by,
    }


def render_context_json(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    ns = snapshot.namespace
    document = {
        "$schema": ns.url(SCHEMA_PATH),
        "namespace": ns.slug,
        "name": ns.name,
        "title": ns.title,
        "summary": ns.summary,
        "url": ns.base_url,
        "language": ns.language,
        "license": ns.license,
        "contact": ns.contact,
        "knowledgeVersion": stamp.knowledge_version,
        "revision": stamp.revision,
        "releaseId": stamp.sequence,
        "generatedAt": stamp.generated_at,
        "entryCount": len(snapshot.entries),
        "totalTokens": snapshot.total_tokens,
        "categories": [{"id": c.slug, "name": c.name, "purpose": c.purpose} for c in ns.categories],
        "rules": list(ns.rules),
        "entries": [entry_payload(e, url=ns.url(f"api/entries/{e.id}")) for e in snapshot.entries],
        "retired": [tombstone_payload(t) for t in snapshot.tombstones],
    }
    return orjson.dumps(document)

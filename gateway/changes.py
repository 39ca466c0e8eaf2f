"""GET /api/changes?since=…: what changed per entry between a past release and the served one, a page at a time."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlencode

import orjson
from django.http import QueryDict

from gateway.cache import Cached, reply_cached
from gateway.declared import REPEATED, Operation, Parameter
from gateway.gate import Gate
from knowledge.retrieval.changes import change_counts, changes_page, manifest_changes
from knowledge.retrieval.contract.records import PUBLIC, clears
from knowledge.selectors.changes import SINCE_INVALID, SINCE_UNKNOWN, SinceError, since_resolve
from knowledge.selectors.serving import LoadedRelease

LIMIT_DEFAULT = 200
LIMIT_MAX = 1000
SINCE_MISSING = (
    "since is required: the releaseId or knowledgeVersion you last saw, or an ISO 8601 time (0: from the start)."
)
LIMIT_INVALID = "limit must be a whole number from 1 to 1000."
SINCE_PATTERN = (
    r"^\s*(?:[0-9]{1,9}|v?[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:[0-9]{2})?)?)\s*$"
)
SINCE = Parameter(
    "since",
    {"type": "string", "pattern": SINCE_PATTERN, "examples": ["0", "3", "1.4.0", "2026-09-01T00:00:00Z"]},
    "A releaseId, a knowledgeVersion, an ISO 8601 time, or 0 for everything.",
    {"missing_since": SINCE_MISSING, "invalid_since": SINCE_INVALID, "unknown_release": SINCE_UNKNOWN},
    required=True,
)
AFTER = Parameter("after", {"type": "string", "maxLength": 64}, "Continue after this entry ID (see `next`).")
LIMIT = Parameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX, "default": LIMIT_DEFAULT},
    "Changes per page.",
    {"invalid_limit": LIMIT_INVALID},
)
CHANGES = Operation((SINCE, AFTER, LIMIT), {"repeated_parameter": REPEATED})


def served_manifest(release: LoadedRelease) -> dict[str, Any]:
    """The served release's manifest, as stored with it, rebuilt from memory (no query)."""

    def build() -> dict[str, Any]:
        return {
            "entries": [{"id": e.id, "version": e.version, "hash": e.content_hash} for e in release.snapshot.entries],
            "retired": [t.id for t in release.snapshot.tombstones],
        }

    return release.memoized("manifest", build)


def manifest_cleared(manifest: dict[str, Any] | None, clearance: str) -> dict[str, Any] | None:
    """An earlier release's manifest without the entries the caller may not read (issue 12 §4): their IDs
    would otherwise show up as removed. Manifests name the sensitivity of non-public entries."""
    if not manifest:
        return manifest
    entries = [item for item in manifest.get("entries", ()) if clears(clearance, item.get("sensitivity", PUBLIC))]
    return {**manifest, "entries": entries}


def changes_params(query: QueryDict) -> tuple[str, str | None, int]:
    sent = CHANGES.sent_once(query)
    since = sent.get(SINCE.name)
    if since is None or not since.strip():
        raise SINCE.refusal("missing_since")
    after = sent.get(AFTER.name, "").strip().upper() or None
    raw = sent.get(LIMIT.name, "").strip()
    if not raw:
        return since.strip(), after, LIMIT_DEFAULT
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses, and other scripts' digits.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or not 1 <= int(raw) <= LIMIT_MAX:
        raise LIMIT.refusal("invalid_limit")
    return since.strip(), after, int(raw)


def _document(gate: Gate, since: str, after: str | None, limit: int) -> dict[str, Any]:
    release = gate.release
    try:
        start = since_resolve(namespace_id=gate.namespace.id, reference=since)
    except SinceError as error:
        raise SINCE.refusal(error.code, str(error)) from None
    changes = manifest_changes(manifest_cleared(start.manifest, gate.clearance), served_manifest(release))
    page, more = changes_page(changes, after=after, limit=limit)
    following = None
    if more and page:
        following = gate.path("api/changes") + "?" + urlencode({"since": since, "after": page[-1].id, "limit": limit})
    stamp = release.stamp
    return {
        "namespace": release.snapshot.namespace.slug,
        "since": {"reference": since, "releaseId": start.sequence, "knowledgeVersion": start.knowledge_version},
        "releaseId": stamp.sequence,
        "knowledgeVersion": stamp.knowledge_version,
        "generatedAt": stamp.generated_at,
        "changeCount": len(changes),
        "counts": change_counts(changes),
        "changes": [change.as_json() for change in page],
        "next": following,
    }


def changes_body(gate: Gate, *, since: str, after: str | None, limit: int) -> Cached:
    """The page as bytes and its ETag, cached per served release: releases are immutable, and `since`
    names an immutable release (a time resolves through activations, which change the served release)."""
    release = gate.release
    asked = hashlib.sha256(orjson.dumps([since, after, limit, gate.prefix, gate.clearance])).hexdigest()[:32]
    key = f"chg:{release.snapshot.namespace.slug}:{release.key}:{asked}"
    return reply_cached(key, lambda: orjson.dumps(_document(gate, since, after, limit)))

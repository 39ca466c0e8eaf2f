"""GET/HEAD /api/entries/<ID>[?version=N] and .md (seed §6): 200 published, 410 retired, 404 unknown (nearest IDs)."""

from __future__ import annotations

import orjson
from django.http import HttpRequest

from gateway.entries import entry_id_check, entry_lookup, normalize_entry_id, version_parse
from gateway.gate import Gate
from gateway.http import JSON, MARKDOWN, CachePolicy, Reply
from gateway.views import read_view
from knowledge.requestlog.records import entry_observed
from knowledge.retrieval.contract.lookups import EntryFound, EntryGone, EntryLookup
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.render.release import etag_of


def _status(found: object) -> int:
    if isinstance(found, EntryFound):
        return 200
    return 410 if isinstance(found, EntryGone) else 404


def _private(found: EntryLookup) -> dict[str, str]:
    """Headers that keep a non-public earlier version out of shared caches.

    The gate marks an answer public when the caller's view holds nothing above public, but `?version=`
    reads past that view: an entry public today may have been internal in the version asked for.
    """
    if isinstance(found, EntryFound) and found.entry.sensitivity != PUBLIC:
        return {"Cache-Control": CachePolicy(public=False).header(), "Vary": "Authorization"}
    return {}


def _lookup(request: HttpRequest, gate: Gate, entry_id: str) -> tuple[EntryLookup, int | None]:
    entry_id_check(entry_id)
    version = version_parse(request.GET.getlist("version"))
    return entry_lookup(gate.release, entry_id, version=version, clearance=gate.clearance), version


@read_view
def entry_get(request: HttpRequest, gate: Gate, entry_id: str) -> Reply:
    found, version = _lookup(request, gate, entry_id)
    body, status = orjson.dumps(found.payload), _status(found)
    etag = etag_of(body)
    observed = entry_observed(
        namespace_id=gate.namespace.id,
        release_id=gate.release.release_id,
        channel="rest",
        entry_id=normalize_entry_id(entry_id),
        status=status,
        etag=etag,
        version=version,
        clearance=gate.clearance,
    )
    return Reply(
        body,
        JSON,
        status=status,
        etag=etag,
        describedby=gate.path("llms.txt"),
        headers=_private(found),
        observed=observed,
    )


@read_view
def entry_markdown_get(request: HttpRequest, gate: Gate, entry_id: str) -> Reply:
    found, _ = _lookup(request, gate, entry_id)
    return Reply(
        found.markdown.encode(),
        MARKDOWN,
        status=_status(found),
        describedby=gate.path("llms.txt"),
        headers=_private(found),
    )

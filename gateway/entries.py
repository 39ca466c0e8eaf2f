"""One entry by public ID (seed §6): published → the entry, retired → its tombstone, else the nearest IDs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge.retrieval.payload import citation_item, is_stale
from knowledge.retrieval.render.context_json import entry_payload, tombstone_payload
from knowledge.retrieval.render.markdown import entry_markdown, missing_markdown, tombstone_markdown
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import EntryRecord, Tombstone
from knowledge.selectors.serving import LoadedRelease


@dataclass(frozen=True, slots=True)
class EntryFound:
    entry: EntryRecord
    payload: dict[str, Any]  # the JSON of GET /api/entries/<ID>
    markdown: str  # GET /api/entries/<ID>.md


@dataclass(frozen=True, slots=True)
class EntryGone:
    tombstone: Tombstone
    payload: dict[str, Any]  # {id, title, retiredAt, reason, replacedBy}
    markdown: str


@dataclass(frozen=True, slots=True)
class EntryMissing:
    """Never existed here — including IDs of other namespaces, which answer exactly alike."""

    entry_id: str
    nearest: tuple[str, ...]
    payload: dict[str, Any]
    markdown: str


EntryLookup = EntryFound | EntryGone | EntryMissing


def normalize_entry_id(entry_id: str) -> str:
    return entry_id.strip().upper()[:64]


def _found(release: LoadedRelease, entry: EntryRecord) -> EntryFound:
    ns = release.snapshot.namespace
    payload = entry_payload(entry, url=ns.url(f"api/entries/{entry.id}"))
    payload["stale"] = is_stale(entry.updated, revision=release.stamp.revision)
    payload["citation"] = citation_item(entry, view=release.view)
    payload["knowledgeVersion"] = release.stamp.knowledge_version
    payload["releaseId"] = release.stamp.sequence
    return EntryFound(entry, payload, entry_markdown(entry, namespace=ns, stamp=release.stamp))


def entry_lookup(release: LoadedRelease, entry_id: str) -> EntryLookup:
    """Look the ID up in the release (a dict lookup; the payload is built per call so memory stays bounded)."""
    return _lookup(release, normalize_entry_id(entry_id))


def _lookup(release: LoadedRelease, wanted: str) -> EntryLookup:
    ns = release.snapshot.namespace
    entry = release.entry(wanted)
    if entry is not None:
        return _found(release, entry)
    tombstone = release.tombstones.get(wanted)
    if tombstone is not None:
        return EntryGone(tombstone, tombstone_payload(tombstone), tombstone_markdown(tombstone, namespace=ns))
    nearest = release.nearest(wanted)
    message = messages_for(ns.language).not_found.format(name=ns.name, id=wanted, nearest=", ".join(nearest) or "-")
    payload = {"error": {"code": "not_found", "message": message, "param": "id"}, "nearest": list(nearest)}
    return EntryMissing(wanted, nearest, payload, missing_markdown(wanted, nearest, namespace=ns))


def entry_found(release: LoadedRelease, entry: EntryRecord) -> EntryFound:
    """The payload and Markdown of ``entry`` as this release serves entries (also for an earlier version of it)."""
    return _found(release, entry)

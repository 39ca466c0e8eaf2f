"""One entry by public ID (seed §6): published → the entry, retired → its tombstone, else the nearest IDs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.errors import BadParameterError
from knowledge.retrieval.render.context_json import tombstone_payload
from knowledge.retrieval.render.markdown import entry_markdown, missing_markdown, tombstone_markdown
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import EntryRecord, Tombstone
from knowledge.selectors.documents import UNKNOWN_VERSION, entry_document, entry_version_record
from knowledge.selectors.serving import LoadedRelease

VERSION_INVALID = "version must be a whole number from 1 (a published version of the entry)."


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
    markdown = entry_markdown(entry, namespace=release.snapshot.namespace, stamp=release.stamp)
    return EntryFound(entry, entry_document(release, entry), markdown)


def entry_lookup(release: LoadedRelease, entry_id: str, *, version: int | None = None) -> EntryLookup:
    """Look the ID up in the release (a dict lookup; the payload is built per call so memory stays bounded).

    With `version`, an earlier published version of a served entry (BadParameterError unknown_version
    when it has none such).
    """
    found = _lookup(release, normalize_entry_id(entry_id))
    if version is None or not isinstance(found, EntryFound) or version == found.entry.version:
        return found
    older = None
    if release.namespace_id is not None:
        older = entry_version_record(namespace_id=release.namespace_id, current=found.entry, version=version)
    if older is None:
        message = UNKNOWN_VERSION.format(id=found.entry.id, version=version, current=found.entry.version)
        raise BadParameterError(message, param="version", code="unknown_version")
    return _found(release, older)


def version_parse(raw: str | None) -> int | None:
    """?version=N: a whole number from 1, or absent (400 invalid_version otherwise)."""
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 9:
        raise BadParameterError(VERSION_INVALID, param="version", code="invalid_version")
    return int(raw)


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

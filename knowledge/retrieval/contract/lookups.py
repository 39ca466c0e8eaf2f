"""One entry by public ID (seed §6), as every channel answers it: found, gone (410) or missing (404)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.contract.shapes import MISSING, SERVED_ENTRY, TOMBSTONE, Missing, Served
from knowledge.retrieval.render.markdown import entry_markdown, missing_markdown, tombstone_markdown
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import EntryRecord, NamespaceInfo


@dataclass(frozen=True, slots=True)
class EntryFound:
    entry: EntryRecord
    payload: dict[str, Any]  # SERVED_ENTRY: GET /api/entries/<ID>, MCP get_entry
    markdown: str  # GET /api/entries/<ID>.md, MCP resources/read


@dataclass(frozen=True, slots=True)
class EntryGone:
    tombstone: Tombstone
    payload: dict[str, Any]  # TOMBSTONE: the 410 body
    markdown: str


@dataclass(frozen=True, slots=True)
class EntryMissing:
    """Never existed here — including IDs of other namespaces, which answer exactly alike."""

    entry_id: str
    nearest: tuple[str, ...]
    payload: dict[str, Any]  # MISSING: the 404 body
    markdown: str


EntryLookup = EntryFound | EntryGone | EntryMissing


def entry_found(served: Served) -> EntryFound:
    markdown = entry_markdown(served.entry, namespace=served.namespace, stamp=served.stamp)
    return EntryFound(served.entry, SERVED_ENTRY.json(served), markdown)


def entry_gone(tombstone: Tombstone, *, namespace: NamespaceInfo) -> EntryGone:
    return EntryGone(tombstone, TOMBSTONE.json(tombstone), tombstone_markdown(tombstone, namespace=namespace))


def entry_missing(entry_id: str, nearest: tuple[str, ...], *, namespace: NamespaceInfo) -> EntryMissing:
    message = messages_for(namespace.language).not_found.format(
        name=namespace.name, id=entry_id, nearest=", ".join(nearest) or "-"
    )
    payload = MISSING.json(Missing(entry_id, nearest, message))
    return EntryMissing(entry_id, nearest, payload, missing_markdown(entry_id, nearest, namespace=namespace))

"""One entry by public ID (seed §6): published → the entry, retired → its tombstone, else the nearest IDs.

The outcomes and their JSON are the agent contract's (``knowledge.retrieval.contract.lookups``); this
module finds the entry in a release.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gateway.declared import REPEATED, Operation, Parameter
from knowledge.retrieval.contract.lookups import EntryFound, EntryLookup, entry_found, entry_gone, entry_missing
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.contract.shapes import Served
from knowledge.retrieval.snapshot import EntryRecord
from knowledge.selectors.documents import UNKNOWN_VERSION, entry_version_record
from knowledge.selectors.layers import entry_layer_source
from knowledge.selectors.serving import LoadedRelease

VERSION_INVALID = "version must be a whole number from 1 (a published version of the entry)."
VERSION = Parameter(
    "version",
    {"type": "integer", "minimum": 1, "maximum": 999_999_999},
    "A published version number.",
    {"invalid_version": VERSION_INVALID, "unknown_version": UNKNOWN_VERSION, "repeated_parameter": REPEATED},
)
ID_CONTROL = "The entry ID contains control characters; send the ID as plain text, such as EG-202."
# The entry pages: the ID is the path; an unknown one answers 404 with the nearest IDs, one with control
# characters 400 invalid_id (as /api/context refuses such a topic) rather than echo them back.
ENTRY_PAGE = Operation((), {"invalid_id": ID_CONTROL})
ENTRY = Operation((VERSION,), ENTRY_PAGE.refusals)  # /api/entries/<ID>: the page's refusals, and ?version=
# Unicode's Cc category (gateway.params refuses a topic with them; importing it from there would be circular).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def normalize_entry_id(entry_id: str) -> str:
    return entry_id.strip().upper()[:64]


def entry_id_check(entry_id: str) -> None:
    """400 invalid_id for an ID with control characters; `param` is the 404's (`id`)."""
    if _CONTROL.search(entry_id) is not None:
        raise ENTRY_PAGE.refusal("invalid_id", param="id")


def _found(release: LoadedRelease, entry: EntryRecord) -> EntryFound:
    return entry_found(Served(entry, release.snapshot.namespace, release.stamp))


def entry_lookup(
    release: LoadedRelease, entry_id: str, *, version: int | None = None, clearance: str = PUBLIC
) -> EntryLookup:
    """Look the ID up in the release (a dict lookup; the payload is built per call so memory stays bounded).

    With `version`, an earlier published version of a served entry that `clearance` (the caller's, as
    ``Gate.clearance``) may read: BadParameterError unknown_version when it has none such, the same
    answer for a version above the clearance as for one never published.
    """
    found = _lookup(release, normalize_entry_id(entry_id))
    if version is None or not isinstance(found, EntryFound) or version == found.entry.version:
        return found
    older = None
    if release.namespace_id is not None:
        # A base's entry keeps its versions in the base (knowledge.selectors.layers.entry_layer_source).
        source = entry_layer_source(namespace_id=release.namespace_id, layer=found.entry.layer, clearance=clearance)
        if source is not None:
            namespace_id, cleared = source
            older = entry_version_record(
                namespace_id=namespace_id, current=found.entry, version=version, clearance=cleared
            )
    if older is None:
        raise VERSION.refusal("unknown_version", id=found.entry.id, version=version, current=found.entry.version)
    return _found(release, replace(older, layer=found.entry.layer))


def version_parse(raw: str | list[str] | None) -> int | None:
    """?version=N: a whole number from 1, or absent (400 invalid_version otherwise); `raw` as a list: every
    value sent, of which there must be one (400 repeated_parameter)."""
    if isinstance(raw, list):
        if len(raw) > 1:
            raise VERSION.refusal("repeated_parameter", param=VERSION.name)
        raw = raw[0] if raw else None
    if raw is None or raw == "":
        return None
    # ASCII digits only: str.isdigit() also takes "²" and "①", which int() refuses, and other scripts' digits.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
        raise VERSION.refusal("invalid_version")
    return int(raw)


def _lookup(release: LoadedRelease, wanted: str) -> EntryLookup:
    ns = release.snapshot.namespace
    entry = release.entry(wanted)
    if entry is not None:
        return _found(release, entry)
    tombstone = release.tombstones.get(wanted)
    if tombstone is not None:
        return entry_gone(tombstone, namespace=ns)
    return entry_missing(wanted, release.nearest(wanted), namespace=ns)

"""The JSON documents agents get from a release: the /api/context pack and one entry (REST, MCP, A2A, replay).

One definition, so a replayed request (knowledge.selectors.replay) renders the same bytes the
gateway served.
"""

from __future__ import annotations

from typing import Any, Final

from knowledge.models import EntryVersion, VersionState
from knowledge.retrieval.contract.records import SENSITIVITY_LEVELS, clears
from knowledge.retrieval.contract.shapes import SERVED_ENTRY, Served
from knowledge.retrieval.payload import ContextQuery, context_build
from knowledge.retrieval.snapshot import EntryRecord
from knowledge.selectors.serving import LoadedRelease
from knowledge.selectors.snapshots import entry_record

UNKNOWN_VERSION: Final = "{id} has no published version {version}; omit version for the current one ({current})."


def context_document(release: LoadedRelease, query: ContextQuery) -> dict[str, Any]:
    """The seed §4 payload (ranks and packs every time; gateway.context caches the bytes)."""
    return context_build(index=release.index, view=release.view, query=query)


def entry_document(release: LoadedRelease, entry: EntryRecord) -> dict[str, Any]:
    """GET /api/entries/<ID>: the entry as this release serves it (also for an earlier version of it)."""
    return SERVED_ENTRY.json(Served(entry, release.snapshot.namespace, release.stamp))


def entry_version_record(
    *, namespace_id: int, current: EntryRecord, version: int, clearance: str
) -> EntryRecord | None:
    """An earlier published version of a served entry (one row) that `clearance` may read, or None.

    Only numbers below the served one qualify, so a version published after the release was built
    stays invisible until its release is; a number outside that range is refused before the query,
    so no integer is too large for it. A version above the caller's clearance is None like one that
    never existed (issue 12 §4: sensitivity is per version, and an entry made public later must not
    open its earlier, internal text).
    """
    if not 1 <= version < current.version:
        return None
    readable = [level for level in SENSITIVITY_LEVELS if clears(clearance, level)]
    row = (
        EntryVersion.objects.filter(
            entry__namespace_id=namespace_id,
            entry__public_id=current.id,
            number=version,
            state__in=(VersionState.PUBLISHED, VersionState.SUPERSEDED),
            sensitivity__in=readable,
        )
        .select_related("entry__category")
        .first()
    )
    return None if row is None else entry_record(entry=row.entry, version=row)

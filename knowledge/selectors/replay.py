"""Replaying a logged request byte for byte from its release and parameters, and diffing it with today's answer.

Releases are immutable and never deleted, and every document is rendered by one definition
(knowledge.selectors.documents), so a logged request rendered again from its release gives the same
bytes: the ETag logged with it proves it. A request is rendered from the view of the clearance it was
served with (``RequestLog.clearance``), so a key's answer is not compared with the public one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from knowledge.models import Namespace, Release, RequestLog
from knowledge.requestlog.records import CONTEXT, ENTRY
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.payload import ContextQuery
from knowledge.retrieval.render.release import etag_of
from knowledge.selectors.documents import context_document, entry_document, entry_version_record
from knowledge.selectors.pinned import release_load
from knowledge.selectors.serving import LoadedRelease


class ReplayError(Exception):
    """A log row that cannot be replayed (its route has no replay, or its release is gone)."""


@dataclass(frozen=True, slots=True)
class Replayed:
    release_sequence: int
    status: int
    body: bytes
    etag: str
    document: dict[str, Any]


def _render(log: RequestLog, release: LoadedRelease) -> Replayed:
    if log.route == CONTEXT:
        query = ContextQuery(topic=log.topic, budget=log.budget or 0, category=log.category, limit=log.limit)
        document = context_document(release, query)
        status = 200
    elif log.route == ENTRY:
        entry_id = str(log.params.get("id", ""))
        entry = release.entry(entry_id)
        if entry is None:
            raise ReplayError(f"{entry_id} is not served by release #{release.stamp.sequence}.")
        version = log.params.get("version")
        if version:
            older = entry_version_record(
                namespace_id=log.namespace_id, current=entry, version=int(version), clearance=_clearance(log)
            )
            if older is None:
                raise ReplayError(f"{entry_id} has no version {version} in release #{release.stamp.sequence}.")
            entry = older
        document = entry_document(release, entry)
        status = 200
    else:
        raise ReplayError(f"Requests of route {log.route!r} are not replayed.")
    body = orjson.dumps(document)
    return Replayed(release.stamp.sequence, status, body, etag_of(body), document)


def _clearance(log: RequestLog) -> str:
    """The clearance the answer was served with (rows logged before it was recorded: public, as served then)."""
    return log.clearance or PUBLIC


def _loaded(log: RequestLog, release: Release) -> LoadedRelease:
    """The release as the logged caller read it: the view of the clearance logged with the request."""
    return release_load(release).cleared(_clearance(log))


def request_replay(*, log: RequestLog) -> Replayed:
    """The answer rendered again from the logged request's own release."""
    release = Release.objects.get(pk=log.release_id)
    if release.files_pruned_at is not None:
        raise ReplayError(
            f"The files of release #{release.sequence} were pruned (retention policy); it cannot be replayed."
        )
    return _render(log, _loaded(log, release))


def request_replay_current(*, log: RequestLog) -> Replayed | None:
    """The answer the namespace's serving release gives to the same request (None without one)."""
    release = Namespace.objects.select_related("active_release").get(pk=log.namespace_id).active_release
    return None if release is None else _render(log, _loaded(log, release))


def _entries(document: dict[str, Any]) -> dict[str, tuple[int, str]]:
    items = document.get("entries")
    if items is None and "id" in document:
        items = [document]
    return {e["id"]: (e.get("version"), e.get("contentHash")) for e in items or ()}


def pack_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What differs between two answers: entries added, dropped, changed (version/hash) or moved; key fields."""
    old, new = _entries(before), _entries(after)
    old_order = [i for i in old if i in new]
    new_order = [i for i in new if i in old]
    fields = ("matched", "usedTokens", "truncated", "entryCount", "knowledgeVersion", "releaseId")
    return {
        "added": [i for i in new if i not in old],
        "removed": [i for i in old if i not in new],
        "changed": [i for i in new if i in old and new[i] != old[i]],
        "reordered": old_order != new_order,
        "fields": {name: [before.get(name), after.get(name)] for name in fields if before.get(name) != after.get(name)},
        "identical": before == after,
    }

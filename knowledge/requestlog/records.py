"""What one logged request holds: the part shared by every repeat of an answer, and the part per request.

A replayed answer (gateway.replay) logs by reference to the `Observed` built when Django first gave it,
so logging a repeat costs a tuple and a deque append; the flusher thread turns them into rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from knowledge.retrieval.contract.records import PUBLIC

CONTEXT = "context"
ENTRY = "entry"


@dataclass(frozen=True, slots=True)
class Observed:
    """Everything a log row says about an answer that does not change when the same answer is given again."""

    namespace_id: int
    release_id: int  # the Release row the answer came from
    channel: str  # rest, mcp, a2a
    route: str  # context, entry
    status: int
    etag: str
    topic: str = ""
    budget: int | None = None
    category: str | None = None
    limit: int | None = None
    matched: bool | None = None
    hit_count: int | None = None
    returned: tuple[str, ...] = ()
    omitted: tuple[str, ...] = ()
    used_tokens: int | None = None
    params: tuple[tuple[str, Any], ...] = ()  # what replay needs beyond the above (entry id, version, release)
    clearance: str = PUBLIC  # the view the answer was served from; replay renders it again
    _json: list[bytes] = field(default_factory=list, compare=False, repr=False)

    def as_row(self) -> dict[str, Any]:
        return {
            "namespace_id": self.namespace_id,
            "release_id": self.release_id,
            "channel": self.channel,
            "route": self.route,
            "status": self.status,
            "etag": self.etag,
            "topic": self.topic,
            "budget": self.budget,
            "category": self.category,
            "limit": self.limit,
            "matched": self.matched,
            "hit_count": self.hit_count,
            "returned": list(self.returned),
            "omitted": list(self.omitted),
            "used_tokens": self.used_tokens,
            "params": dict(self.params),
        } | ({"clearance": self.clearance} if self.clearance != PUBLIC else {})  # public (most rows): no key

    def encoded(self) -> bytes:
        """The shared part as JSON, serialized once however often the answer is repeated."""
        if not self._json:
            self._json.append(orjson.dumps(self.as_row()))
        return self._json[0]


def context_observed(
    document: dict[str, Any],
    *,
    namespace_id: int,
    release_id: int,
    channel: str,
    etag: str,
    limit: int | None,
    clearance: str = PUBLIC,
) -> Observed:
    """The Observed of a /api/context answer (or search_context result), from its body; `clearance` is
    the view's (``LoadedRelease.clearance``), which alone decides the pack."""
    query = document.get("query") or {}
    return Observed(
        namespace_id=namespace_id,
        release_id=release_id,
        channel=channel,
        route=CONTEXT,
        status=200,
        etag=etag,
        topic=str(query.get("topic", "")),
        budget=query.get("budget"),
        category=query.get("category"),
        limit=limit,
        matched=document.get("matched"),
        hit_count=document.get("hitCount"),
        returned=tuple(entry["id"] for entry in document.get("entries", ())),
        omitted=tuple(item["id"] for item in document.get("omitted", ())),
        used_tokens=document.get("usedTokens"),
        clearance=clearance,
    )


def entry_observed(
    *,
    namespace_id: int,
    release_id: int,
    channel: str,
    entry_id: str,
    status: int,
    etag: str,
    version: int | None = None,
    clearance: str = PUBLIC,
) -> Observed:
    """The Observed of a /api/entries/<ID> answer (or get_entry result); `clearance` is the caller's
    (``Gate.clearance``), which an earlier version is read with."""
    params: tuple[tuple[str, Any], ...] = (("id", entry_id),) + ((("version", version),) if version else ())
    return Observed(
        namespace_id=namespace_id,
        release_id=release_id,
        channel=channel,
        route=ENTRY,
        status=status,
        etag=etag,
        returned=(entry_id,) if status == 200 else (),
        params=params,
        clearance=clearance,
    )

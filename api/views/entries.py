"""GET/HEAD /api/entries/<ID> and .md (seed §6): 200 published, 410 retired, 404 unknown (nearest IDs)."""

from __future__ import annotations

import orjson
from django.http import HttpRequest

from gateway.entries import EntryFound, EntryGone, entry_lookup
from gateway.gate import Gate
from gateway.http import JSON, MARKDOWN, Reply
from gateway.views import read_view


def _status(found: object) -> int:
    if isinstance(found, EntryFound):
        return 200
    return 410 if isinstance(found, EntryGone) else 404


@read_view
def entry_get(request: HttpRequest, gate: Gate, entry_id: str) -> Reply:
    found = entry_lookup(gate.release, entry_id)
    return Reply(orjson.dumps(found.payload), JSON, status=_status(found), describedby=gate.path("llms.txt"))


@read_view
def entry_markdown_get(request: HttpRequest, gate: Gate, entry_id: str) -> Reply:
    found = entry_lookup(gate.release, entry_id)
    return Reply(found.markdown.encode(), MARKDOWN, status=_status(found), describedby=gate.path("llms.txt"))

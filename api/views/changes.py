"""GET/HEAD /api/changes?since=<releaseId | knowledgeVersion | ISO time>&after=<ID>&limit=N: the change feed."""

from __future__ import annotations

from django.http import HttpRequest

from gateway.changes import changes_body, changes_params
from gateway.gate import Gate
from gateway.http import JSON, Reply
from gateway.views import read_view


@read_view
def changes_get(request: HttpRequest, gate: Gate) -> Reply:
    since, after, limit = changes_params(request.GET)
    body, etag = changes_body(gate, since=since, after=after, limit=limit)
    return Reply(body, JSON, etag=etag, describedby=gate.path("llms.txt"))

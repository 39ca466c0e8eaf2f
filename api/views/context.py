"""GET/HEAD /api/context (seed §4): a token-budgeted, cited fact pack from the active release."""

from __future__ import annotations

import orjson
from django.http import HttpRequest

from gateway.context import context_answer, context_observed
from gateway.explain import explain_asked, explained_document
from gateway.gate import Gate
from gateway.http import JSON, Reply
from gateway.params import context_query_from_string, query_string
from gateway.views import read_view


@read_view
def context_get(request: HttpRequest, gate: Gate) -> Reply:
    release = gate.release
    namespace = release.snapshot.namespace
    query = context_query_from_string(
        query_string(request),
        categories=[c.slug for c in namespace.categories],
        default_budget=namespace.default_budget,
    )
    explain, asked = explain_asked(query_string(request))
    if explain:
        return Reply(orjson.dumps(explained_document(gate, query, asked)), JSON, describedby=gate.path("llms.txt"))
    answer = context_answer(release, query)
    observed = context_observed(release, query, answer, channel="rest")
    return Reply(answer.body, JSON, etag=answer.etag, describedby=gate.path("llms.txt"), observed=observed)

"""MCP ``search_context`` calls answered in front of Django (gateway.fastpost), as the REST miss is.

Django's answer to an MCP POST teaches the replay layer the route (``McpSearchRoute``, attached by the
view); the next stateless 2025-era ``tools/call`` of ``search_context`` on that route is answered with
the same work the view does after Django — the namespace as the request addressed it, the rate limit,
the served release, the protocol core with the same backend — and the headers Django gave the route.
Anything else (another method or tool, the 2026-07-28 envelope, a key, an Origin, a namespace no longer
public or without a release, a client over its limit) goes to Django, which answers as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError
from django.utils.http import parse_header_parameters

from gateway.clients import client_address_of
from gateway.errors import GatewayError
from gateway.fastpost import PostAnswer
from gateway.gate import Gate
from gateway.ratelimit import rate_for, rate_limit_hit
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.selectors.serving import NamespaceState, release_served
from mcp_bridge import transport
from mcp_bridge.backend import DjangoBackend
from mcp_bridge.protocol import McpHeaders, answer_plain_call, check_http, plain_tool_call

FAST_TOOL = "search_context"


def mcp_headers(meta: dict[str, Any]) -> McpHeaders:
    """The MCP request headers of a WSGI environ (request.META is one)."""
    return McpHeaders(
        protocol_version=meta.get("HTTP_MCP_PROTOCOL_VERSION"),
        method=meta.get("HTTP_MCP_METHOD"),
        name=meta.get("HTTP_MCP_NAME"),
    )


@dataclass(frozen=True, slots=True)
class McpSearchRoute:
    """One MCP route as Django answered it: how to read its namespace again, its prefix and its base URL."""

    state: Callable[[], NamespaceState | None]  # the namespace as the request addressed it (gate.state_resolver)
    prefix: str
    base_url: str  # scheme and host are part of the route's key, so they are this route's
    route: str = "mcp"

    def body_limit(self) -> int:
        return transport.max_body_bytes()

    def answer(self, environ: dict[str, Any], body: bytes) -> PostAnswer | None:
        content_type, _ = parse_header_parameters(environ.get("CONTENT_TYPE", ""))
        if check_http("POST", accept=environ.get("HTTP_ACCEPT"), content_type=content_type) is not None:
            return None
        headers = mcp_headers(environ)
        message = plain_tool_call(body, headers, FAST_TOOL)
        if message is None:
            return None
        try:
            state = self.state()
            if state is None or not state.is_public or state.release_id is None or state.release_key is None:
                return None
            release = release_served(state)
        except (GatewayError, DatabaseError):
            return None
        client = client_address_of(environ)
        decision = rate_limit_hit(scope=state.slug, client=client, rate=rate_for(state.rate_limit))
        if decision is not None and not decision.admitted:
            return None  # Django answers the refusal (a refused request is not counted twice)
        gate = Gate(namespace=state, release=release.cleared(PUBLIC), prefix=self.prefix, client=client, rate=decision)
        backend = DjangoBackend(gate=gate, base_url=self.base_url, source="mcp")
        outcome = answer_plain_call(message, headers, backend)
        return PostAnswer(transport.outcome_bytes(outcome), state, client, decision)

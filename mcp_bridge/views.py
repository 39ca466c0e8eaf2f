"""HTTP only: POST /mcp, POST /a2a, the A2A agent card and the MCP server card, at / and /t/<namespace>/; the
protocols live in the core."""

from __future__ import annotations

import logging
from collections.abc import Callable

import orjson
from django.core.exceptions import SuspiciousOperation
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from gateway.errors import METHOD_NOT_ALLOWED, NOT_FOUND, GatewayError, MethodNotAllowedError, NotFoundError
from gateway.gate import Gate, request_gate, state_resolver
from gateway.http import JSON, MARKDOWN, CachePolicy, Reply, finish, read_body
from gateway.outages import database_unavailable, degraded_headers
from gateway.views import ALLOWED_METHODS, gateway_error_response, read_view
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.security_events import BODY_TOO_LARGE, security_event
from mcp_bridge import transport
from mcp_bridge.a2a import build_agent_card, handle_a2a_post
from mcp_bridge.a2a_extensions import SPECIFICATIONS
from mcp_bridge.backend import DjangoBackend
from mcp_bridge.fastpath import McpSearchRoute
from mcp_bridge.jsonrpc import INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE, Outcome, error_body
from mcp_bridge.protocol import SUPPORTED_VERSIONS, McpHeaders, check_http, handle_post
from mcp_bridge.server_card import MEDIA_TYPE as SERVER_CARD_MEDIA_TYPE
from mcp_bridge.server_card import build_catalog, build_server_card
from mcp_bridge.task_store import DatabaseTaskStore, task_retention_seconds
from mcp_bridge.tools import build_tools

logger = logging.getLogger(__name__)

Answer = Callable[[HttpRequest, bytes, Gate], Outcome]


def _admitted(
    request: HttpRequest, namespace: str | None, answer: Answer, *, fast: bool = False, a2a: bool = False
) -> HttpResponse:
    """Body cap, then the gate (namespace, key, rate), then ``answer`` with the rate headers and CORS added.

    ``fast``: a public 200 answer teaches the replay layer the route (mcp_bridge.fastpath). ``a2a``: the
    refusals (413, 404, 429, 503) answer 200 with the same body and headers (``transport.in_band``)."""
    cors = transport.cors_headers(request)

    def refuse(outcome: Outcome) -> HttpResponse:
        return transport.respond(transport.in_band(outcome) if a2a else outcome, extra=cors)

    limit = transport.max_body_bytes()
    body = read_body(request, limit)
    if body is None:
        security_event(BODY_TOO_LARGE, request=request, namespace=namespace, reason="over_body_cap", limit=limit)
        return refuse(transport.too_large(limit))
    try:
        gate = request_gate(request, namespace=namespace)
    except GatewayError as error:
        return refuse(transport.gateway_refusal(error, body))
    except DatabaseError as error:  # a namespace never read before, or read too long ago
        return refuse(transport.gateway_refusal(database_unavailable(error), body))
    rate = gate.rate.headers() if gate.rate else {}
    outcome = answer(request, body, gate)
    response = transport.respond(outcome, extra={**rate, **cors, **degraded_headers()})
    if fast and outcome.status == 200 and not outcome.headers and gate.namespace.is_public and gate.clearance == PUBLIC:
        base_url = transport.namespace_base_url(request, gate)
        route = McpSearchRoute(state_resolver(request, namespace), gate.prefix, base_url)
        response.evergreen_fast_post = route  # type: ignore[attr-defined]
    return response


def _never_500(view: Callable[[HttpRequest, str | None], HttpResponse]) -> Callable[..., HttpResponse]:
    """Whatever fails below answers JSON-RPC ``-32603`` in a 200, as the core does (docs/protocols.md)."""

    @csrf_exempt
    def wrapped(request: HttpRequest, namespace: str | None = None) -> HttpResponse:
        try:
            return view(request, namespace)
        except SuspiciousOperation:
            raise  # Django answers 400 (a disallowed Host, for one)
        except Exception:
            logger.exception("%s %s failed", request.method, request.path)
            return transport.respond(Outcome(200, error_body(None, INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE)))

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


def _mcp_answer(request: HttpRequest, body: bytes, gate: Gate) -> Outcome:
    base_url = transport.namespace_base_url(request, gate)
    backend = DjangoBackend(gate=gate, base_url=base_url, source="mcp", request=request)
    headers = McpHeaders(
        protocol_version=request.headers.get("MCP-Protocol-Version"),
        method=request.headers.get("Mcp-Method"),
        name=request.headers.get("Mcp-Name"),
    )
    return handle_post(body, headers, backend)


@_never_500
def mcp_post(request: HttpRequest, namespace: str | None) -> HttpResponse:
    """MCP Streamable HTTP, both eras (2025-11-25 handshake and 2026-07-28): one JSON-RPC message per POST."""
    if transport.is_preflight(request):
        return transport.preflight(request, namespace)
    if not transport.origin_allowed(request, namespace):
        return transport.respond(transport.origin_refused(request, namespace))
    refusal = check_http(request.method or "", accept=request.headers.get("Accept"), content_type=request.content_type)
    if refusal is not None:
        return transport.respond(refusal, extra=transport.cors_headers(request))
    return _admitted(request, namespace, _mcp_answer, fast=True)


def _a2a_answer(request: HttpRequest, body: bytes, gate: Gate) -> Outcome:
    base_url = transport.namespace_base_url(request, gate)
    backend = DjangoBackend(gate=gate, base_url=base_url, source="a2a", request=request)
    tasks = DatabaseTaskStore(
        namespace_id=gate.namespace.id,
        client=gate.client,
        request=request,
        namespace=gate.namespace.slug,
        clearance=gate.clearance,
    )
    return handle_a2a_post(
        body,
        backend,
        tasks,
        extensions_header=request.headers.get("X-A2A-Extensions"),
        # A2A 1.0 §3.6.1: the version travels as a header or, instead, as a query parameter.
        version=request.headers.get("A2A-Version") or request.GET.get("A2A-Version"),
    )


@_never_500
def a2a_post(request: HttpRequest, namespace: str | None) -> HttpResponse:
    """A2A v0.3.0 JSON-RPC at the agent card's ``url`` (§7: message/send, tasks/get, tasks/cancel)."""
    if transport.is_preflight(request):
        return transport.preflight(request, namespace)
    if not transport.origin_allowed(request, namespace):
        return transport.respond(transport.origin_refused(request, namespace))
    if request.method != "POST":
        return transport.respond(Outcome(405, None, (("Allow", "POST"),)))
    return _admitted(request, namespace, _a2a_answer, a2a=True)


@read_view
def agent_card_get(request: HttpRequest, gate: Gate) -> Reply:
    """A2A v0.3.0 §5.3 ``/.well-known/agent-card.json``, with seed §10's ETag, Cache-Control and describedby Link."""
    backend = DjangoBackend(gate=gate, base_url=transport.namespace_base_url(request, gate), source="a2a")
    info = backend.namespace()
    card = build_agent_card(info, build_tools(info), backend.rules(), retention_seconds=task_retention_seconds())
    return Reply(orjson.dumps(card), JSON, describedby=gate.path("llms.txt"), headers=dict(DISCOVERY_CORS))


@csrf_exempt
def a2a_extension_get(request: HttpRequest, name: str) -> HttpResponse:
    """The specification at an extension's URI (A2A extensions.md: "SHOULD be hosted at the extension's URI")."""
    if request.method not in ALLOWED_METHODS:
        refused = MethodNotAllowedError(METHOD_NOT_ALLOWED)
        refused.headers = {"Allow": ", ".join(ALLOWED_METHODS)}
        return gateway_error_response(request, refused)
    document = SPECIFICATIONS.get(name)
    if document is None:
        return gateway_error_response(request, NotFoundError(NOT_FOUND))
    return finish(request, Reply(document.encode(), MARKDOWN), cache=CachePolicy())


# Discovery documents are public metadata, readable from any browser origin (SEP-2127 §CORS Requirements).
DISCOVERY_CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD"}


@read_view
def server_card_get(request: HttpRequest, gate: Gate) -> Reply:
    """The namespace's MCP Server Card (SEP-2127 draft), at ``/mcp/server-card`` and the SEP-1649 well-known path."""
    info = DjangoBackend(gate=gate, base_url=transport.namespace_base_url(request, gate), source="mcp").namespace()
    card = build_server_card(info, versions=SUPPORTED_VERSIONS)
    content_type = f"{SERVER_CARD_MEDIA_TYPE}; charset=utf-8"
    return Reply(orjson.dumps(card), content_type, describedby=gate.path("llms.txt"), headers=dict(DISCOVERY_CORS))


@read_view
def mcp_catalog_get(request: HttpRequest, gate: Gate) -> Reply:
    """``/.well-known/mcp/catalog.json``: the MCP Catalog (draft) naming this namespace's server card."""
    info = DjangoBackend(gate=gate, base_url=transport.namespace_base_url(request, gate), source="mcp").namespace()
    return Reply(orjson.dumps(build_catalog(info)), JSON, headers=dict(DISCOVERY_CORS))

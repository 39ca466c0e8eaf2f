"""HTTP edges shared by the MCP and A2A views: body cap, Origin policy, CORS, and Outcome → HttpResponse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from gateway.errors import GatewayError
from gateway.gate import Gate, namespace_lookup
from gateway.http import JSON
from knowledge.models import Namespace
from knowledge.security_events import ORIGIN_REFUSED, security_event
from mcp_bridge.backend import RenderedPack
from mcp_bridge.jsonrpc import INVALID_REQUEST, Outcome, clean_request_id, decode_json, dumps, error_body

# JSON-RPC 2.0 §5.1 leaves -32000..-32099 to the implementation; MCP (-32020..-32022) and A2A
# (-32001..-32007) use parts of it, so the gateway's refusals (namespace, key, rate) take -32000
# and carry the REST error object ({code, message, param}) as data.
GATEWAY_ERROR: Final = -32000
BODY_TOO_LARGE_MESSAGE: Final = "Request body too large: at most {limit} bytes"
ORIGIN_REFUSED_MESSAGE: Final = "Origin not allowed: {origin}"
CORS_ALLOW_HEADERS: Final = (
    "Accept, Authorization, Content-Type, Last-Event-ID, MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
    "Mcp-Session-Id, X-A2A-Extensions, A2A-Version"
)
CORS_EXPOSE_HEADERS: Final = "Mcp-Session-Id, Retry-After, RateLimit, RateLimit-Policy, X-A2A-Extensions"


def max_body_bytes() -> int:
    """``EVERGREEN_MCP_MAX_BODY_BYTES``, 64 KiB by default: a tool call is a few hundred bytes."""
    return settings.EVERGREEN.mcp_max_body_bytes


def too_large(limit: int) -> Outcome:
    return Outcome(
        413, error_body(None, INVALID_REQUEST, BODY_TOO_LARGE_MESSAGE.format(limit=limit), reason="body_too_large")
    )


def namespace_base_url(request: HttpRequest, gate: Gate) -> str:
    """The namespace's root as this request addressed it: scheme, host (checked against ALLOWED_HOSTS) and prefix."""
    return request.build_absolute_uri(gate.path("")).rstrip("/")


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _listed(origin: str, allowed: list[str]) -> bool:
    """Exact match, or ``scheme://host:*`` for any port (the SDK's ``TransportSecuritySettings`` syntax)."""
    for entry in (item.strip().lower().rstrip("/") for item in allowed):
        if origin == entry or (entry.endswith(":*") and origin.startswith(entry[:-2] + ":")):
            return True
    return False


def _canonical_origin(request: HttpRequest, namespace: str | None) -> str | None:
    """The origin of the addressed namespace's canonical base URL (one query; only for an unmatched Origin)."""
    _, state = namespace_lookup(request, namespace)
    if state is None:
        return None
    base_url = Namespace.objects.filter(pk=state.id).values_list("base_url", flat=True).first()
    return _origin_of(base_url) if base_url else None


def origin_allowed(request: HttpRequest, namespace: str | None) -> bool:
    """Streamable HTTP §Security (2025-11-25 and 2026-07-28): a present ``Origin`` must be one we trust.

    Checked before anything else, so an untrusted Origin gets 403 whatever the method, key or rate
    ("MUST respond with HTTP 403 Forbidden"). Trusted: ``EVERGREEN_MCP_ALLOWED_ORIGINS``, the
    origin of the host this request addressed — Django has already checked that host against
    ALLOWED_HOSTS, which is what defeats DNS rebinding (a rebound name is not an allowed host) — and
    the namespace's canonical origin (its base URL). Clients that send no Origin (every non-browser
    client) are not affected.
    """
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    origin = origin.strip().lower().rstrip("/")
    if origin == _origin_of(request.build_absolute_uri("/")):
        return True
    if _listed(origin, list(settings.EVERGREEN.mcp_allowed_origins)):
        return True
    return origin == _canonical_origin(request, namespace)


def origin_refused(request: HttpRequest, namespace: str | None) -> Outcome:
    """The 403 of an untrusted Origin, written to the security log (the Origin is not a secret)."""
    origin = request.headers.get("Origin", "")[:200]
    security_event(ORIGIN_REFUSED, request=request, namespace=namespace, reason="untrusted_origin", origin=origin)
    return Outcome(
        403, error_body(None, INVALID_REQUEST, ORIGIN_REFUSED_MESSAGE.format(origin=origin), reason="origin_refused")
    )


def cors_headers(request: HttpRequest) -> dict[str, str]:
    """For a browser caller whose Origin was allowed: let it read the answer (Fetch standard, CORS protocol)."""
    origin = request.headers.get("Origin")
    if not origin:
        return {}
    return {"Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": CORS_EXPOSE_HEADERS}


def is_preflight(request: HttpRequest) -> bool:
    """A CORS preflight: ``OPTIONS`` with an ``Origin`` (anything else non-POST is a plain 405)."""
    return request.method == "OPTIONS" and bool(request.headers.get("Origin"))


def preflight(request: HttpRequest, namespace: str | None) -> HttpResponse:
    """A browser's CORS preflight: trusted origins may POST with the MCP and A2A headers, others get 403.

    Answered without the gate: a preflight carries no credentials and does not count against the rate.
    """
    if not origin_allowed(request, namespace):
        return respond(origin_refused(request, namespace))
    response = HttpResponse(status=204)
    for name, value in cors_headers(request).items():
        response[name] = value
    response["Access-Control-Allow-Methods"] = "POST"
    response["Access-Control-Allow-Headers"] = CORS_ALLOW_HEADERS
    response["Access-Control-Max-Age"] = "600"
    response["Vary"] = "Origin"
    return response


def request_id_of(body: bytes | None) -> Any:
    """The request's id when the body is a readable request (to answer a refusal in kind), else None."""
    if not body:
        return None
    try:
        message = decode_json(body)
    except Exception:  # noqa: BLE001 - any unreadable body simply has no id
        return None
    return clean_request_id(message) if isinstance(message, dict) else None


def gateway_refusal(error: GatewayError, body: bytes | None) -> Outcome:
    """A gateway error (404 namespace or key, 429 rate) as a JSON-RPC error with the REST status and headers."""
    data = error.body()["error"]
    return Outcome(
        error.status,
        error_body(request_id_of(body), GATEWAY_ERROR, error.message, data),
        tuple(error.headers.items()),
    )


def in_band(outcome: Outcome) -> Outcome:
    """A refusal as A2A sends it: the JSON-RPC error in a 200, its headers (``Retry-After``…) kept.

    a2a-sdk's client calls ``raise_for_status()`` before it reads the body (``a2a/client/transports/
    jsonrpc.py`` ``_send_request``), so at any other status an agent sees a bare HTTP error instead of the
    code and message; the SDK's own server answers every JSON-RPC error, "Payload too large" included, with
    200 (``a2a/server/apps/jsonrpc/jsonrpc_app.py``). A private namespace and a missing one stay alike.
    """
    return Outcome(200, outcome.body, outcome.headers) if outcome.body is not None else outcome


# Where a tool result's pack goes while the rest is encoded: no JSON text can hold a NUL (refused in
# requests, impossible in PostgreSQL text), so nothing else encodes to this.
_PACK_PLACE = "\x00evergreen-pack\x00"
_PACK_PLACE_JSON = dumps(_PACK_PLACE)
_DIGITS = frozenset(b"0123456789")


def _numbers_alike(rendered: bytes) -> bool:
    """Whether json.dumps writes every number of ``rendered`` (orjson's) as it is: orjson writes 1e-05 as
    0.00001 and 1.5e-07 as 1.5e-7 (below 1e-4 only); strings are alike. Text that merely looks like such
    a number only costs the encoding again. Byte searches: a regular expression cost more than encoding."""
    if b"0.0000" in rendered:
        return False
    at = rendered.find(b"e-")
    while at != -1:
        if at > 0 and rendered[at - 1] in _DIGITS and rendered[at + 2 : at + 3] and rendered[at + 2] in _DIGITS:
            return False
        at = rendered.find(b"e-", at + 2)
    return True


def _rendered_pack(body: dict[str, Any]) -> RenderedPack | None:
    result = body.get("result")
    pack = result.get("structuredContent") if isinstance(result, dict) else None
    return pack if isinstance(pack, RenderedPack) and _numbers_alike(pack.rendered) else None


def outcome_bytes(outcome: Outcome) -> bytes:
    """The body as ``dumps`` encodes it; a search's pack is the bytes /api/context sent for it (the same text)."""
    if outcome.body is None:
        return b""
    pack = _rendered_pack(outcome.body)
    if pack is None:
        return dumps(outcome.body).encode()
    text = dumps({**outcome.body, "result": {**outcome.body["result"], "structuredContent": _PACK_PLACE}})
    before, _, after = text.partition(_PACK_PLACE_JSON)
    return before.encode() + pack.rendered + after.encode()


def respond(outcome: Outcome, *, extra: Mapping[str, str] | None = None) -> HttpResponse:
    """The HTTP response of an Outcome: JSON (UTF-8) or no body, never cached, with the given headers."""
    response = HttpResponse(outcome_bytes(outcome), status=outcome.status)
    if outcome.body is not None:
        response["Content-Type"] = JSON
    else:
        del response["Content-Type"]
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    for name, value in (extra or {}).items():
        response[name] = value
    for name, value in outcome.headers:
        response[name] = value
    return response

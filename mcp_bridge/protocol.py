"""MCP over Streamable HTTP without HTTP objects: one decoded POST in, one status and body out."""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_bridge import mcp_methods
from mcp_bridge.jsonrpc import (
    INTERNAL_ERROR,
    INTERNAL_ERROR_MESSAGE,
    INVALID_BODY_MESSAGE,
    INVALID_ID_MESSAGE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    METHOD_NOT_FOUND_MESSAGE,
    PARSE_ERROR,
    JsonRpcError,
    Outcome,
    RequestId,
    clean_request_id,
    decode_json,
    envelope_is_valid,
    error_body,
    is_request_id,
    is_response,
    request_refusal,
    result_body,
)
from mcp_bridge.mcp_methods import Call
from mcp_bridge.ports import Backend

logger = logging.getLogger(__name__)

MODERN_VERSIONS: Final = ("2026-07-28",)
HANDSHAKE_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_VERSIONS: Final = MODERN_VERSIONS + HANDSHAKE_VERSIONS
LATEST_HANDSHAKE_VERSION: Final = "2025-11-25"

# 2026-07-28 basic/index.mdx §Error Codes.
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
HEADER_MISMATCH_CODE: Final = "header_mismatch"

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
# 2026-07-28 schema LoggingLevel (RFC 5424 severities).
# 2026-07-28 schema ClientCapabilities: the known members, each an object when present (others are open).
CAPABILITY_OBJECTS: Final = ("elicitation", "experimental", "extensions", "roots", "sampling")
LOG_LEVELS: Final = frozenset({"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"})

# streamable-http §Standard Request Headers: which body field Mcp-Name mirrors.
NAME_BEARING: Final[Mapping[str, str]] = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
CACHEABLE: Final = frozenset(
    {"server/discover", "tools/list", "resources/list", "resources/read", "resources/templates/list", "prompts/list"}
)

ENVELOPE_MISSING_MESSAGE: Final = f"params._meta must carry {META_PROTOCOL_VERSION!r} and {META_CLIENT_CAPABILITIES!r}"
VERSION_NOT_STRING_MESSAGE: Final = "The protocol version in params._meta must be a string"
META_FIELD_MESSAGE: Final = "params._meta[{key!r}] must be {kind}"
CAPABILITIES_KIND: Final = (
    "a ClientCapabilities object (elicitation, experimental, extensions, roots and sampling, when present, objects)"
)
VERSION_HEADER_MISMATCH_MESSAGE: Final = "MCP-Protocol-Version header does not match the request's protocol version"
METHOD_HEADER_MISMATCH_MESSAGE: Final = "Mcp-Method header does not match the request body's method"
NAME_HEADER_MISMATCH_MESSAGE: Final = "Mcp-Name header does not match the request body's {field!r} parameter"
UNSUPPORTED_VERSION_MESSAGE: Final = "Unsupported protocol version"
POSTED_RESPONSE_MESSAGE: Final = "A JSON-RPC response cannot be posted to this endpoint"
NOT_ACCEPTABLE_MESSAGE: Final = "Not Acceptable: Client must accept application/json"
UNSUPPORTED_MEDIA_TYPE_MESSAGE: Final = "Unsupported Media Type: Content-Type must be application/json"

_SENTINEL: Final = re.compile(r"=\?base64\?(?P<payload>.*)\?=")


@dataclass(frozen=True)
class McpHeaders:
    """The request headers the protocol reads (names are case-insensitive; the view fills these)."""

    protocol_version: str | None = None
    method: str | None = None
    name: str | None = None


def decode_header_value(value: str | None) -> str | None:
    """streamable-http §Value Encoding: undo ``=?base64?…?=``; a malformed sentinel decodes to None."""
    if value is None:
        return None
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        raw = base64.b64decode(payload, validate=True)
        if base64.b64encode(raw).decode("ascii") != payload:
            return None
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _accepts_json(accept: str | None) -> bool:
    types = {part.split(";")[0].strip().lower() for part in (accept or "").split(",")}
    return bool(types & {"application/json", "application/*", "*/*"})


def _is_json_content(content_type: str | None) -> bool:
    media = (content_type or "").split(";")[0]
    return any(part.strip().lower() == "application/json" for part in media.split(","))


def check_http(method: str, *, accept: str | None, content_type: str | None) -> Outcome | None:
    """The HTTP-level refusals that come before JSON-RPC: 405, then 406, then 415 (SDK order)."""
    if method.upper() != "POST":
        return Outcome(405, None, (("Allow", "POST"),))
    if not _accepts_json(accept):
        return Outcome(406, error_body(None, INVALID_REQUEST, NOT_ACCEPTABLE_MESSAGE, reason="not_acceptable"))
    if not _is_json_content(content_type):
        return Outcome(
            415, error_body(None, INVALID_REQUEST, UNSUPPORTED_MEDIA_TYPE_MESSAGE, reason="unsupported_media_type")
        )
    return None


def _status(code: int, *, modern: bool) -> int:
    """SDK ``ERROR_CODE_HTTP_STATUS`` for 2026-07-28; the legacy transport only 400s unreadable bodies."""
    if code in (PARSE_ERROR, INVALID_REQUEST):
        return 400
    if not modern:
        return 200
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (INVALID_PARAMS, HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION):
        return 400
    return 200


def _error(request_id: RequestId | None, exc: JsonRpcError, *, modern: bool) -> Outcome:
    return Outcome(_status(exc.code, modern=modern), error_body(request_id, exc.code, exc.message, exc.data))


def _meta(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else None


def _claims_modern(message: Mapping[str, Any], headers: McpHeaders) -> bool:
    """2026-07-28 versioning.mdx: modern ``_meta`` selects this revision; so does a non-handshake header."""
    meta = _meta(message)
    if meta is not None and META_PROTOCOL_VERSION in meta:
        return True
    return headers.protocol_version is not None and headers.protocol_version not in HANDSHAKE_VERSIONS


def _unsupported(requested: str) -> JsonRpcError:
    data = {"supported": list(SUPPORTED_VERSIONS), "requested": requested}
    return JsonRpcError(
        UNSUPPORTED_PROTOCOL_VERSION, UNSUPPORTED_VERSION_MESSAGE, data, reason="unsupported_protocol_version"
    )


def _check_envelope(message: Mapping[str, Any], headers: McpHeaders) -> None:
    """The 2026-07-28 ladder (SDK ``classify_inbound_request`` order): envelope, headers, version."""
    meta = _meta(message)
    if meta is None or META_PROTOCOL_VERSION not in meta or META_CLIENT_CAPABILITIES not in meta:
        header = headers.protocol_version
        if (meta is None or META_PROTOCOL_VERSION not in meta) and header and header not in SUPPORTED_VERSIONS:
            # No envelope and a header naming no revision we serve: say which ones we do (more useful than
            # "envelope missing" to a client that only has the header to offer).
            raise _unsupported(header)
        raise JsonRpcError(
            INVALID_PARAMS, ENVELOPE_MISSING_MESSAGE, {"param": "params._meta"}, reason="missing_envelope"
        )
    version = meta[META_PROTOCOL_VERSION]
    if headers.protocol_version is None or headers.protocol_version != version:
        raise JsonRpcError(HEADER_MISMATCH, VERSION_HEADER_MISMATCH_MESSAGE, reason=HEADER_MISMATCH_CODE)
    method = message["method"]
    if headers.method != method:
        raise JsonRpcError(HEADER_MISMATCH, METHOD_HEADER_MISMATCH_MESSAGE, reason=HEADER_MISMATCH_CODE)
    field = NAME_BEARING.get(method)
    if field is not None:
        body_value = message["params"].get(field)
        if body_value is not None and decode_header_value(headers.name) != body_value:
            raise JsonRpcError(
                HEADER_MISMATCH, NAME_HEADER_MISMATCH_MESSAGE.format(field=field), reason=HEADER_MISMATCH_CODE
            )
    if not isinstance(version, str):
        raise JsonRpcError(
            INVALID_PARAMS, VERSION_NOT_STRING_MESSAGE, {"param": f"params._meta.{META_PROTOCOL_VERSION}"}
        )
    if version not in MODERN_VERSIONS:
        raise _unsupported(version)
    _check_meta_types(meta)


def _check_meta_types(meta: Mapping[str, Any]) -> None:
    """2026-07-28 schema ``RequestMetaObject``: clientCapabilities is a ``ClientCapabilities`` object,
    clientInfo (optional) an ``Implementation`` with string name and version, logLevel (optional) a
    ``LoggingLevel``; else -32602. Null for an optional field reads as absent, as the SDK's model does.
    Checked after the version rungs, where the SDK validates its typed request."""
    capabilities = meta[META_CLIENT_CAPABILITIES]
    if not isinstance(capabilities, dict) or any(
        not isinstance(capabilities.get(name), dict | None) for name in CAPABILITY_OBJECTS
    ):
        raise _meta_field_error(META_CLIENT_CAPABILITIES, CAPABILITIES_KIND)
    client = meta.get(META_CLIENT_INFO)
    if client is not None and not (
        isinstance(client, dict) and isinstance(client.get("name"), str) and isinstance(client.get("version"), str)
    ):
        raise _meta_field_error(META_CLIENT_INFO, mcp_methods.CLIENT_INFO_KIND)
    level = meta.get(META_LOG_LEVEL)
    if level is not None and not (isinstance(level, str) and level in LOG_LEVELS):
        raise _meta_field_error(META_LOG_LEVEL, "one of " + ", ".join(sorted(LOG_LEVELS)))


def _meta_field_error(key: str, kind: str) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, META_FIELD_MESSAGE.format(key=key, kind=kind), {"param": f"params._meta.{key}"})


def _notification(message: Mapping[str, Any], headers: McpHeaders, *, modern: bool) -> Outcome:
    """202 for an acceptable notification (both eras); none of them changes anything here."""
    if not envelope_is_valid(message):
        return Outcome(400, error_body(None, INVALID_REQUEST, INVALID_BODY_MESSAGE))
    if modern:
        meta = _meta(message) or {}
        header = headers.protocol_version
        if header is None or (META_PROTOCOL_VERSION in meta and meta[META_PROTOCOL_VERSION] != header):
            return Outcome(
                400, error_body(None, HEADER_MISMATCH, VERSION_HEADER_MISMATCH_MESSAGE, reason=HEADER_MISMATCH_CODE)
            )
        if header not in MODERN_VERSIONS:
            return _error(None, _unsupported(header), modern=True)
    return Outcome(202)


def _legacy(method: str, call: Call) -> dict[str, Any]:
    if method == "initialize":
        return mcp_methods.initialize(call, HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION)
    if method == "ping":
        return mcp_methods.ping(call)
    handler = mcp_methods.SHARED_METHODS.get(method)
    if handler is None:
        raise JsonRpcError(METHOD_NOT_FOUND, METHOD_NOT_FOUND_MESSAGE)
    return handler(call)


def _modern(method: str, call: Call) -> dict[str, Any]:
    """2026-07-28: ``resultType`` on every result, cache hints on the cacheable ones, serverInfo in ``_meta``."""
    if method == "server/discover":
        result = mcp_methods.discover(call, SUPPORTED_VERSIONS)
    else:
        handler = mcp_methods.SHARED_METHODS.get(method)
        if handler is None:
            raise JsonRpcError(METHOD_NOT_FOUND, METHOD_NOT_FOUND_MESSAGE)
        result = handler(call)
    result["resultType"] = "complete"
    if method in CACHEABLE:
        policy = call.backend.cache_policy()
        result["ttlMs"] = max(policy.max_age, 0) * 1000
        result["cacheScope"] = "public" if policy.public else "private"
    result["_meta"] = {META_SERVER_INFO: mcp_methods.server_info(call.backend.namespace())}
    return result


def _request(message: Mapping[str, Any], headers: McpHeaders, backend: Backend, *, modern: bool) -> Outcome:
    request_id = message.get("id")
    if not is_request_id(request_id):
        return Outcome(400, error_body(None, INVALID_REQUEST, INVALID_ID_MESSAGE))
    if not envelope_is_valid(message):
        return Outcome(400, error_body(request_id, INVALID_REQUEST, INVALID_BODY_MESSAGE))
    method: str = message["method"]
    params: dict[str, Any] = message.get("params") or {}
    call = Call(backend=backend, params=params, modern=modern)
    try:
        if modern:
            _check_envelope(message, headers)
            result = _modern(method, call)
        else:
            result = _legacy(method, call)
    except JsonRpcError as exc:
        return _error(request_id, exc, modern=modern)
    except Exception:
        logger.exception("MCP %s failed", method)
        return Outcome(200, error_body(request_id, INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE))
    return Outcome(200, result_body(request_id, result))


def _screened(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """The message as the edge check reads it: a ``tools/call`` request's arguments are the tool's to refuse.

    tools.mdx §Error Handling (SEP-1303): invalid argument values are tool execution errors (``isError``),
    not protocol errors; ``tools.call_tool`` checks them the same way before any handler runs.
    """
    params = message.get("params")
    if message.get("method") != "tools/call" or "id" not in message or not isinstance(params, dict):
        return message
    return {**message, "params": {key: value for key, value in params.items() if key != "arguments"}}


def _refused(message: Mapping[str, Any], *, modern: bool) -> Outcome | None:
    """A value no handler may meet (``jsonrpc.request_refusal``): answered before any dispatch."""
    refusal = request_refusal(_screened(message))
    if refusal is None:
        return None
    if "id" not in message:  # a notification has no id to answer: any refusal of one is a 400
        return Outcome(400, error_body(None, refusal.code, refusal.message, refusal.data))
    return _error(clean_request_id(message), refusal, modern=modern)


def _handle(body: bytes, headers: McpHeaders, backend: Backend) -> Outcome:
    try:
        message = decode_json(body)
    except JsonRpcError as exc:
        return _error(None, exc, modern=False)
    if not isinstance(message, dict):
        return Outcome(400, error_body(None, INVALID_REQUEST, INVALID_BODY_MESSAGE))
    modern = _claims_modern(message, headers)
    refused = _refused(message, modern=modern)
    if refused is not None:
        return refused
    if is_response(message):
        # 2025-11-25 transports.mdx §Sending Messages 4 accepts posted responses; 2026-07-28 §4 forbids them.
        return (
            Outcome(400, error_body(None, INVALID_REQUEST, POSTED_RESPONSE_MESSAGE, reason="posted_response"))
            if modern
            else Outcome(202)
        )
    if "id" not in message:
        return _notification(message, headers, modern=modern)
    return _request(message, headers, backend, modern=modern)


def plain_tool_call(body: bytes, headers: McpHeaders, tool: str) -> dict[str, Any] | None:
    """The message when ``body`` calls ``tool`` in a 2025-era request ``handle_post`` answers with a 200 and no
    headers whatever the arguments (readable, a usable id, a valid envelope, nothing ``request_refusal``
    refuses); None for anything else. ``answer_plain_call`` then answers it as ``handle_post`` would."""
    try:
        message = decode_json(body)
    except JsonRpcError:
        return None
    if not isinstance(message, dict) or _claims_modern(message, headers) or is_response(message):
        return None
    if not is_request_id(message.get("id")) or not envelope_is_valid(message) or message["method"] != "tools/call":
        return None
    if (message.get("params") or {}).get("name") != tool or request_refusal(message) is not None:
        return None
    return message


def answer_plain_call(message: Mapping[str, Any], headers: McpHeaders, backend: Backend) -> Outcome:
    """``handle_post``'s answer to a message ``plain_tool_call`` returned (decoded and checked already)."""
    return _request(message, headers, backend, modern=False)


def handle_post(body: bytes, headers: McpHeaders, backend: Backend) -> Outcome:
    """Answer one POST to ``/mcp`` (after ``check_http`` passed). Never raises."""
    try:
        return _handle(body, headers, backend)
    except Exception:
        logger.exception("MCP request failed before dispatch")
        return Outcome(200, error_body(None, INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE))

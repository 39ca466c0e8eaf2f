"""JSON-RPC 2.0 framing shared by the MCP and A2A endpoints: decoding, ids, error and result bodies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

# JSON-RPC 2.0 §5.1 codes, used with the same meaning by MCP (both eras) and A2A v0.3.0 §8.1.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

PARSE_ERROR_MESSAGE: Final = "Parse error"
INVALID_BODY_MESSAGE: Final = "Body must be a single JSON-RPC request or notification object"
INVALID_ID_MESSAGE: Final = "Request id must be a string or an integer"
METHOD_NOT_FOUND_MESSAGE: Final = "Method not found"
INTERNAL_ERROR_MESSAGE: Final = "Internal error"

RequestId = str | int


class JsonRpcError(Exception):
    """A failure that answers the request with a JSON-RPC error object (never an HTTP 500)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class Outcome:
    """What the HTTP view sends: a status, a JSON body or none (202, 405…), and extra headers."""

    status: int
    body: dict[str, Any] | None = None
    headers: tuple[tuple[str, str], ...] = ()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_json(raw: bytes) -> Any:
    """Decode a request body; any failure is a ``PARSE_ERROR``.

    Bare ``NaN``/``Infinity`` are refused (not JSON); invalid UTF-8, oversized integer literals
    (``ValueError``) and pathological nesting (``RecursionError``) all count as unparseable.
    """
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise JsonRpcError(PARSE_ERROR, PARSE_ERROR_MESSAGE) from exc


def is_request_id(value: object) -> bool:
    """A usable request id: a string or an integer, not a bool and not null (MCP ``basic/index.mdx``)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_is_valid(message: Mapping[str, Any]) -> bool:
    """``jsonrpc`` is exactly "2.0", ``method`` a string and ``params`` an object when present."""
    params = message.get("params")
    return (
        message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and (params is None or isinstance(params, dict))
    )


def is_response(message: Mapping[str, Any]) -> bool:
    """A posted JSON-RPC response (it has ``result`` or ``error`` and no ``method``)."""
    return "method" not in message and ("result" in message or "error" in message)


def error_body(request_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response; ``id`` is always present, null when it could not be read."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_body(request_id: RequestId | None, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def dumps(value: Any) -> str:
    """Compact, deterministic JSON text (keys keep their order; non-ASCII stays readable)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

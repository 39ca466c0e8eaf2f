"""JSON-RPC 2.0 framing shared by the MCP and A2A endpoints: decoding, ids, error and result bodies."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from knowledge.retrieval.contract.fields import is_clean_text

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
INVALID_TEXT_MESSAGE: Final = (
    "{param} is not text this server can store or send back: it holds a lone UTF-16 surrogate "
    "(such as \\ud800) or a NUL character; send well-formed Unicode."
)
INVALID_NUMBER_MESSAGE: Final = "{param} is not a finite number"
TOO_DEEP_MESSAGE: Final = "{param} is nested more than {depth} levels deep"
# Every error's data.code: one stable machine-readable reason, named like the REST API's error codes (the
# same code where the REST API refuses the same thing); the JSON-RPC number only says which class.
STANDARD_REASONS: Final = {
    PARSE_ERROR: "parse_error",
    INVALID_REQUEST: "invalid_request",
    METHOD_NOT_FOUND: "method_not_found",
    INVALID_PARAMS: "invalid_params",
    INTERNAL_ERROR: "internal_error",
}
INVALID_TEXT_CODE: Final = "invalid_text"
INVALID_NUMBER_CODE: Final = "invalid_number"
TOO_DEEP_CODE: Final = "too_deep"
MAX_DEPTH: Final = 32  # no request of either protocol nests half as deep; deeper only costs stack
_PATH_SEGMENT_MAX: Final = 64

RequestId = str | int


class JsonRpcError(Exception):
    """A failure that answers the request with a JSON-RPC error object (never an HTTP 500)."""

    def __init__(self, code: int, message: str, data: Any = None, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = error_data(code, data, reason)


def error_data(code: int, data: Any = None, reason: str | None = None) -> Any:
    """``data`` led by its stable ``code``: the one it has, else ``reason``, else the JSON-RPC code's name.

    A list (A2A 1.0's ``google.rpc.ErrorInfo`` details) is left as the spec shapes it: its ``reason`` is the code.
    """
    if data is not None and not isinstance(data, dict):
        return data
    fields = dict(data or {})
    stable = fields.pop("code", None) or reason or STANDARD_REASONS.get(code, "error")
    return {"code": stable, **fields}


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


def _segment(key: str) -> str:
    """A path segment that is safe to send back even when the key itself is not (escaped, bounded)."""
    return key.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")[:_PATH_SEGMENT_MAX]


def _problem(item: Any, depth: int) -> str | None:
    if isinstance(item, str):
        return None if is_clean_text(item) else INVALID_TEXT_CODE
    if isinstance(item, float):
        return None if math.isfinite(item) else INVALID_NUMBER_CODE  # 1e999 decodes to infinity
    if isinstance(item, dict | list) and depth > MAX_DEPTH:
        return TOO_DEEP_CODE
    return None


def request_problem(value: Any) -> tuple[str, str] | None:
    """(code, path) of the first value the server cannot safely handle, in document order, else None.

    Paths read like ``params.message.parts[0].text``. Checked: text (keys too) that is not clean, numbers
    that are not finite, nesting deeper than ``MAX_DEPTH``. Iterative, so the walk itself needs no stack.
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        code = _problem(item, depth)
        if code is not None:
            return code, where or "$"
        if isinstance(item, dict):
            children = []
            for key, child in item.items():
                child_path = f"{where}.{_segment(key)}" if where else _segment(key)
                if not is_clean_text(key):
                    return INVALID_TEXT_CODE, child_path
                children.append((child, child_path, depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in reversed(list(enumerate(item))))
    return None


_PROBLEM_MESSAGES: Final = {
    INVALID_TEXT_CODE: INVALID_TEXT_MESSAGE,
    INVALID_NUMBER_CODE: INVALID_NUMBER_MESSAGE,
    TOO_DEEP_CODE: TOO_DEEP_MESSAGE,
}


def problem_message(code: str, where: str) -> str:
    """The sentence for a ``request_problem`` code found at ``where``."""
    return _PROBLEM_MESSAGES[code].format(param=where, depth=MAX_DEPTH)


def request_refusal(message: Mapping[str, Any]) -> JsonRpcError | None:
    """A value no handler should meet: -32602 naming the parameter, or -32600 outside ``params``.

    Checked once at the edge, right after decoding, so no handler, database or response encoder ever
    meets a lone surrogate, a NUL, an infinity or a pathological nesting (issue 9: lone surrogates used
    to answer -32603 from seven places).
    """
    found = request_problem(dict(message))
    if found is None:
        return None
    code, where = found
    if where == "params" or where.startswith(("params.", "params[")):
        return JsonRpcError(INVALID_PARAMS, problem_message(code, where), {"code": code, "param": where})
    if where == "id" or where.startswith(("id.", "id[")):
        return JsonRpcError(INVALID_REQUEST, INVALID_ID_MESSAGE)
    return JsonRpcError(INVALID_REQUEST, INVALID_BODY_MESSAGE)


def clean_request_id(message: Mapping[str, Any]) -> RequestId | None:
    """The id to answer with: a valid id made of clean text, else None (an error's id is then null)."""
    value = message.get("id")
    if not is_request_id(value) or (isinstance(value, str) and not is_clean_text(value)):
        return None
    return value


def whole_number(value: object) -> int | None:
    """An integer, or a float with no fractional part (``600.0``, as a2a-sdk 1.x and many models send); else None.

    JSON has one number type; JSON Schema's "integer" accepts 600.0 too (2020-12 validation §6.1.1).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def is_request_id(value: object) -> TypeGuard[RequestId]:
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


def error_body(
    request_id: RequestId | None, code: int, message: str, data: Any = None, *, reason: str | None = None
) -> dict[str, Any]:
    """A JSON-RPC error response; ``id`` is always present (null when it could not be read), ``data.code`` too."""
    error = {"code": code, "message": message, "data": error_data(code, data, reason)}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_body(request_id: RequestId | None, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def dumps(value: Any) -> str:
    """Compact, deterministic JSON text (keys keep their order; non-ASCII stays readable)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

"""Errors the gateway and the read views answer with: status, code, message and the offending parameter."""

from __future__ import annotations

from typing import Any

NAMESPACE_NOT_FOUND = "No such namespace here (or it needs an API key: send Authorization: Bearer <key>)."
RATE_LIMITED = "Too many requests: at most {limit} per {window} seconds. Retry after {retry_after} seconds."
METHOD_NOT_ALLOWED = "Only GET and HEAD are allowed here."
NOT_FOUND = "Nothing is served at this path."
RANGE_NOT_SATISFIABLE = "The range starts past the end of the file ({size} bytes); ask for bytes=0- or less."


class GatewayError(Exception):
    """An HTTP error with the body {"error": {"code", "message", "param"}} (plus optional extra keys)."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code
        self.extra = extra
        self.headers: dict[str, str] = {}  # e.g. Retry-After and the RateLimit fields of a 429

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "param": self.param}, **self.extra}


class BadParameterError(GatewayError):
    status = 400
    code = "invalid_parameter"


class NotFoundError(GatewayError):
    status = 404
    code = "not_found"


class BodyTooLargeError(GatewayError):
    """/api/verify's code for an oversize body, with the 413 MCP and A2A answer one with (RFC 9110 §15.5.14)."""

    status = 413
    code = "body_too_large"


class ServerError(GatewayError):
    status = 500
    code = "server_error"


class NamespaceNotFoundError(NotFoundError):
    """No such namespace, a private one without a valid key, or one without a release: all look alike."""

    def __init__(self) -> None:
        super().__init__(NAMESPACE_NOT_FOUND)


class GoneError(GatewayError):
    status = 410
    code = "gone"


class MethodNotAllowedError(GatewayError):
    status = 405
    code = "method_not_allowed"


class RangeNotSatisfiableError(GatewayError):
    status = 416

    def __init__(self, *, size: int) -> None:
        super().__init__(RANGE_NOT_SATISFIABLE.format(size=size), param="Range", code="range_not_satisfiable")
        self.headers = {"Content-Range": f"bytes */{size}"}


class RateLimitedError(GatewayError):
    status = 429
    code = "rate_limited"

    def __init__(self, *, limit: int, window: int, retry_after: int) -> None:
        super().__init__(RATE_LIMITED.format(limit=limit, window=window, retry_after=retry_after))
        self.retry_after = retry_after


class UnavailableError(GatewayError):
    """A dependency the answer needs (PostgreSQL, Redis, the task broker) does not answer: retry later."""

    status = 503
    code = "database_unavailable"

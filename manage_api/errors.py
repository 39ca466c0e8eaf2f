"""Every refusal of the management API as {"error": {"code", "message", "param"}}, the public API's shape.

| status | codes |
|---|---|
| 400 | invalid_parameter (a field or filter; `param` names it), unknown_field (a body's key), invalid_json |
| 401 | not_authenticated, invalid_token, token_expired, token_revoked |
| 403 | forbidden (a role is missing), token_scope, four_eyes, csrf_failed |
| 404 | not_found |
| 405 | method_not_allowed |
| 409 | invalid_transition, conflict, block_full, release_not_held |
| 410 | release_expired (a release whose files were pruned) |
| 412 | stale_version (If-Match names an older save) |
| 413 | body_too_large (over DATA_UPLOAD_MAX_MEMORY_SIZE: gateway.outages.bad_request) |
| 415 | unsupported_media_type |
| 422 | invalid (well formed, but a rule refuses it: a retired entry, a missing reason …), reason_required |
| 428 | if_match_required |
| 429 | rate_limited |
| 500 | server_error (gateway.outages.server_error) |
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response

from knowledge.errors import SELF_APPROVAL, ServiceError
from knowledge.workflow import TransitionError


class PreconditionRequired(exceptions.APIException):
    status_code = 428
    default_code = "if_match_required"
    default_detail = "Send If-Match with the ETag of the version you edited (GET it first)."


class PreconditionFailed(exceptions.APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_code = "stale_version"
    default_detail = "Someone saved this draft since you read it: GET it again, merge, and send the new ETag."


SERVICE_STATUS = {
    "not_allowed": (status.HTTP_403_FORBIDDEN, "forbidden"),
    "conflict": (status.HTTP_409_CONFLICT, "conflict"),
    "block_full": (status.HTTP_409_CONFLICT, "block_full"),
    "release_not_held": (status.HTTP_409_CONFLICT, "release_not_held"),
    "invalid": (422, "invalid"),
}
UNKNOWN_FIELD = "unknown_field"
# Validation codes that are their own error code; any other validation problem is invalid_parameter.
VALIDATION_CODES = frozenset({UNKNOWN_FIELD})
# DRF's own codes, renamed to the project's.
RENAMED = {
    "permission_denied": "forbidden",
    "authentication_failed": "invalid_token",
    "parse_error": "invalid_json",
    "throttled": "rate_limited",
}


def error_body(code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "param": param}}


def _first_problem(detail: Any, path: str = "") -> tuple[str | None, str, str]:
    """(param, message, code) of the first problem in a ValidationError's nested detail."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            return _first_problem(value, f"{path}.{name}".strip(".") if name else path)
    if isinstance(detail, list) and detail:
        if all(isinstance(item, exceptions.ErrorDetail) for item in detail):
            return path or None, str(detail[0]), getattr(detail[0], "code", "invalid")
        for index, item in enumerate(detail):
            if item:
                return _first_problem(item, f"{path}[{index}]" if path else str(index))
    return path or None, str(detail), getattr(detail, "code", "invalid")


def _service_error(error: ServiceError) -> Response:
    message = str(error)
    status_code, code = SERVICE_STATUS.get(error.code, (422, error.code))  # e.g. synonyms.too_few
    if message == SELF_APPROVAL:
        code = "four_eyes"
    return Response(error_body(code, message), status=status_code)


def _drf_code(error: exceptions.APIException) -> str:
    code = getattr(error.detail, "code", None) or error.default_code
    return RENAMED.get(str(code), str(code))


def exception_handler(error: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER for the management API; anything else is a bug and is left to raise."""
    if isinstance(error, ServiceError):
        return _service_error(error)
    if isinstance(error, TransitionError):
        return Response(error_body("invalid_transition", str(error)), status=status.HTTP_409_CONFLICT)
    if isinstance(error, Http404):
        error = exceptions.NotFound("Not found here.")
    elif isinstance(error, DjangoPermissionDenied):
        error = exceptions.PermissionDenied(str(error) or None)
    if not isinstance(error, exceptions.APIException):
        return None
    headers: dict[str, str] = {}
    if isinstance(error, exceptions.ValidationError):
        param, message, code = _first_problem(error.detail)
        code = code if code in VALIDATION_CODES else "invalid_parameter"
        response = Response(error_body(code, message, param), status=status.HTTP_400_BAD_REQUEST)
    else:
        message = str(error.detail) if not isinstance(error.detail, (list, dict)) else str(error.default_detail)
        response = Response(error_body(_drf_code(error), message), status=error.status_code)
    wait = getattr(error, "wait", None)
    if isinstance(error, exceptions.Throttled) and wait is not None:
        headers["Retry-After"] = str(int(wait))
    if getattr(error, "auth_header", None):
        headers["WWW-Authenticate"] = error.auth_header  # type: ignore[attr-defined]
    for name, value in headers.items():
        response[name] = value
    return response

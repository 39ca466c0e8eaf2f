"""MCP 2026-07-28 per-request envelope: each ``params._meta`` field has the schema's type
(``RequestMetaObject``: clientCapabilities a ClientCapabilities object, clientInfo an Implementation,
logLevel a LoggingLevel), checked against the SDK's own model."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types._v2026_07_28 import RequestMetaObject
from pydantic import ValidationError

from tests.mcp_bridge.conftest import error_of, modern_request, post, result_of
from tests.mcp_bridge.fakes import FakeBackend

CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"

WRONG_TYPES: list[tuple[str, Any]] = [
    (CAPABILITIES, 5),
    (CAPABILITIES, None),
    (CAPABILITIES, "all"),
    (CAPABILITIES, []),
    (CAPABILITIES, {"sampling": 1}),
    (CAPABILITIES, {"roots": "yes"}),
    (CLIENT_INFO, 5),
    (CLIENT_INFO, "pytest"),
    (CLIENT_INFO, {"name": "pytest"}),
    (CLIENT_INFO, {"name": "pytest", "version": 1}),
    (LOG_LEVEL, "loud"),
    (LOG_LEVEL, 3),
    (LOG_LEVEL, {"level": "info"}),
]

RIGHT_TYPES: list[tuple[str, Any]] = [
    (CAPABILITIES, {}),
    (CAPABILITIES, {"sampling": {}, "roots": {"listChanged": True}, "vendor.example/x": 1}),
    (CLIENT_INFO, None),
    (CLIENT_INFO, {"name": "pytest", "version": "1.0", "title": "PyTest"}),
    (LOG_LEVEL, "warning"),
]


def with_meta(key: str, value: Any) -> tuple[dict[str, Any], Any]:
    message, headers = modern_request("tools/list")
    message["params"]["_meta"][key] = value
    return message, headers


@pytest.mark.parametrize(("key", "value"), WRONG_TYPES)
def test_a_meta_field_of_the_wrong_type_is_invalid_params(backend: FakeBackend, key: str, value: Any) -> None:
    message, headers = with_meta(key, value)
    with pytest.raises(ValidationError):
        RequestMetaObject.model_validate(message["params"]["_meta"])  # the SDK's schema refuses it too

    outcome = post(backend, message, headers)

    assert outcome.status == 400
    error = error_of(outcome)
    assert error["code"] == -32602
    assert key in error["message"]
    assert error["data"] == {"code": "invalid_params", "param": f"params._meta.{key}"}
    assert outcome.body is not None and outcome.body["id"] == 1
    assert backend.calls == []


@pytest.mark.parametrize(("key", "value"), RIGHT_TYPES)
def test_a_meta_field_the_schema_allows_is_served(backend: FakeBackend, key: str, value: Any) -> None:
    message, headers = with_meta(key, value)
    RequestMetaObject.model_validate(message["params"]["_meta"])

    assert "tools" in result_of(post(backend, message, headers))

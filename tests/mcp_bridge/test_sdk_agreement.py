"""Evergreen's protocol constants and codecs agree with the reference SDKs (mcp 2.3, a2a-sdk 0.3)."""

from __future__ import annotations

import pytest
from a2a import types as a2a_types
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, NAME_BEARING_METHODS, encode_header_value
from mcp_types import jsonrpc as sdk_jsonrpc
from mcp_types import version as sdk_version
from mcp_types.methods import CACHEABLE_METHODS

from mcp_bridge import a2a, a2a_card, jsonrpc, protocol


def test_the_served_revisions_are_the_sdk_revisions() -> None:
    assert set(protocol.HANDSHAKE_VERSIONS) == set(sdk_version.HANDSHAKE_PROTOCOL_VERSIONS)
    assert set(protocol.MODERN_VERSIONS) == set(sdk_version.MODERN_PROTOCOL_VERSIONS)
    assert protocol.LATEST_HANDSHAKE_VERSION == sdk_version.LATEST_HANDSHAKE_VERSION


def test_error_codes_match_the_sdk() -> None:
    assert protocol.HEADER_MISMATCH == sdk_jsonrpc.HEADER_MISMATCH
    assert protocol.MISSING_REQUIRED_CLIENT_CAPABILITY == sdk_jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert protocol.UNSUPPORTED_PROTOCOL_VERSION == sdk_jsonrpc.UNSUPPORTED_PROTOCOL_VERSION
    assert jsonrpc.PARSE_ERROR == sdk_jsonrpc.PARSE_ERROR
    assert jsonrpc.INVALID_REQUEST == sdk_jsonrpc.INVALID_REQUEST
    assert jsonrpc.METHOD_NOT_FOUND == sdk_jsonrpc.METHOD_NOT_FOUND
    assert jsonrpc.INVALID_PARAMS == sdk_jsonrpc.INVALID_PARAMS
    assert jsonrpc.INTERNAL_ERROR == sdk_jsonrpc.INTERNAL_ERROR


@pytest.mark.parametrize("code", [-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022, -32001, -32002])
def test_modern_http_statuses_match_the_sdk_table(code: int) -> None:
    assert protocol._status(code, modern=True) == ERROR_CODE_HTTP_STATUS.get(code, 200)


def test_cacheable_methods_and_name_bearing_methods_match_the_sdk() -> None:
    assert protocol.CACHEABLE == CACHEABLE_METHODS
    assert dict(protocol.NAME_BEARING) == dict(NAME_BEARING_METHODS)


@pytest.mark.parametrize(
    "value",
    ["get_entry", "evergreen://evergreen/EG-202", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?="],
)
def test_header_values_encoded_by_the_sdk_decode_back(value: str) -> None:
    assert protocol.decode_header_value(encode_header_value(value)) == value


@pytest.mark.parametrize("value", ["=?base64?SGVsbG8=x?=", "=?base64?SGVsbG9=?=", "=?base64?/w==?="])
def test_malformed_sentinels_decode_to_nothing(value: str) -> None:
    assert protocol.decode_header_value(value) is None


@pytest.mark.parametrize(
    ("ours", "sdk_error"),
    [
        (a2a.TASK_NOT_FOUND, a2a_types.TaskNotFoundError),
        (a2a.TASK_NOT_CANCELABLE, a2a_types.TaskNotCancelableError),
        (a2a.PUSH_NOTIFICATION_NOT_SUPPORTED, a2a_types.PushNotificationNotSupportedError),
        (a2a.UNSUPPORTED_OPERATION, a2a_types.UnsupportedOperationError),
        (a2a.CONTENT_TYPE_NOT_SUPPORTED, a2a_types.ContentTypeNotSupportedError),
        (a2a.AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED, a2a_types.AuthenticatedExtendedCardNotConfiguredError),
    ],
)
def test_a2a_error_codes_match_the_sdk(ours: int, sdk_error: type[a2a_types.A2ABaseModel]) -> None:
    assert sdk_error().code == ours  # type: ignore[attr-defined]


def test_a2a_constants_match_the_sdk() -> None:
    assert AGENT_CARD_WELL_KNOWN_PATH == a2a_card.WELL_KNOWN_PATH
    assert a2a_types.AgentCard.model_fields["protocol_version"].default == a2a_card.PROTOCOL_VERSION

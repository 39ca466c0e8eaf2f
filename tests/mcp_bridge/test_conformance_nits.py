"""Small conformance nits QA found with the official SDKs: initialize's required params, the parameter an
A2A -32602 names, and the server card's name on an IP host."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from mcp_types import InitializeRequestParams
from pydantic import ValidationError

from mcp_bridge.server_card import build_catalog, card_name
from tests.mcp_bridge.conftest import call_legacy, error_of, result_of
from tests.mcp_bridge.fakes import FakeBackend, FakeTaskStore, demo_info
from tests.mcp_bridge.test_a2a import error_code, rpc, send, task_of

CARD_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")  # the v2 server card schema's pattern
CLIENT = {"name": "pytest", "version": "1.0"}
FULL = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"capabilities": {}, "clientInfo": CLIENT},
        {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": CLIENT},
        {"protocolVersion": None, "capabilities": {}, "clientInfo": CLIENT},
        {"protocolVersion": "2025-11-25", "clientInfo": CLIENT},
        {"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": CLIENT},
        {"protocolVersion": "2025-11-25", "capabilities": {}},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pytest"}},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"version": "1"}},
    ],
)
def test_initialize_without_its_required_params_is_invalid_params(backend: FakeBackend, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):  # the official SDK's server refuses the same params
        InitializeRequestParams.model_validate(params, by_name=False)

    error = error_of(call_legacy(backend, "initialize", params, version=None))

    assert error["code"] == -32602
    assert "params." in error["message"]


@pytest.mark.parametrize(
    "params",
    [
        FULL,
        {**FULL, "protocolVersion": "1999-01-01"},
        {**FULL, "capabilities": {"roots": {"listChanged": True}, "sampling": {}}},
        {**FULL, "clientInfo": {**CLIENT, "title": "Py Test", "websiteUrl": "https://example.com"}},
        {**FULL, "_meta": {"progressToken": 1}, "unknownField": True},
    ],
)
def test_initialize_accepts_what_the_official_sdk_accepts(backend: FakeBackend, params: dict[str, Any]) -> None:
    InitializeRequestParams.model_validate(params, by_name=False)

    result = result_of(call_legacy(backend, "initialize", params, version=None))

    assert result["serverInfo"]["name"] == "evergreen-evergreen"


def test_a_bad_history_length_in_message_send_names_the_configuration(
    backend: FakeBackend, tasks: FakeTaskStore
) -> None:
    outcome = send(backend, tasks, {"kind": "text", "text": "token"}, configuration={"historyLength": -1})

    assert error_code(outcome) == -32602
    assert outcome.body is not None
    error = outcome.body["error"]
    assert "params.configuration.historyLength" in error["message"]
    assert "params.id" not in error["message"]
    assert error["data"]["param"] == "params.configuration.historyLength"


def test_tasks_get_names_the_parameter_that_is_wrong(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    created = task_of(send(backend, tasks, {"kind": "text", "text": "token"}))

    bad_length = rpc(backend, tasks, "tasks/get", {"id": created["id"], "historyLength": -1})
    bad_id = rpc(backend, tasks, "tasks/get", {"id": 7})

    assert error_code(bad_length) == error_code(bad_id) == -32602
    assert bad_length.body is not None and bad_id.body is not None
    assert "params.historyLength" in bad_length.body["error"]["message"]
    assert "params.id" not in bad_length.body["error"]["message"]
    assert "historyLength" not in bad_id.body["error"]["message"]


@pytest.mark.parametrize(
    ("base_url", "name", "host"),
    [
        ("http://127.0.0.1:8000/t/evergreen", "127.0.0.1/evergreen-evergreen", "127.0.0.1"),
        ("http://10.1.2.3/t/evergreen", "10.1.2.3/evergreen-evergreen", "10.1.2.3"),
        ("http://[::1]:8000/t/evergreen", "--1/evergreen-evergreen", "::1"),
        ("http://[2001:DB8::1]/t/evergreen", "2001-db8--1/evergreen-evergreen", "2001:db8::1"),
        ("https://evergreen.example.com/t/evergreen", "com.example.evergreen/evergreen-evergreen", None),
    ],
)
def test_the_card_name_reverses_domains_but_not_ip_addresses(base_url: str, name: str, host: str | None) -> None:
    info = dataclasses.replace(demo_info(), base_url=base_url)

    assert card_name(info) == name
    assert CARD_NAME.match(card_name(info))
    if host is not None:
        assert build_catalog(info)["entries"][0]["identifier"] == f"urn:air:{host}:evergreen-evergreen"

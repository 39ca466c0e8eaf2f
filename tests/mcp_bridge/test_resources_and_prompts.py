"""Entries as resources (paginated, opaque cursors), prompt packs as prompts, and namespace isolation."""

from __future__ import annotations

import pytest

from knowledge.retrieval.contract.lookups import EntryFound
from mcp_bridge import mcp_methods
from mcp_bridge.mcp_methods import decode_cursor, encode_cursor
from tests.mcp_bridge.conftest import call_legacy, call_modern, error_of, result_of
from tests.mcp_bridge.fakes import FakeBackend, demo_info


def test_resources_list_describes_each_entry_without_its_body(backend: FakeBackend) -> None:
    resources = result_of(call_modern(backend, "resources/list"))["resources"]
    assert resources[0] == {
        "uri": "evergreen://evergreen/EG-001",
        "name": "EG-001",
        "title": "Evergreen 是什么",
        "description": "Evergreen 是什么 summary",
        "mimeType": "text/markdown",
        "annotations": {"lastModified": "2026-08-25T00:00:00Z"},
    }
    assert "body" not in str(resources)


def test_resources_list_pages_with_an_opaque_cursor_until_the_end(
    backend: FakeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_methods, "RESOURCE_PAGE_SIZE", 4)
    first = result_of(call_modern(backend, "resources/list"))
    assert [r["name"] for r in first["resources"]] == ["EG-001", "EG-101", "EG-201", "EG-202"]
    assert "EG-202" not in first["nextCursor"]
    second = result_of(call_modern(backend, "resources/list", {"cursor": first["nextCursor"]}))
    assert [r["name"] for r in second["resources"]] == ["EG-301", "EG-401"]
    assert "nextCursor" not in second


def test_a_single_page_has_no_next_cursor(backend: FakeBackend) -> None:
    assert "nextCursor" not in result_of(call_legacy(backend, "resources/list"))


@pytest.mark.parametrize("cursor", ["", "abc", "e1.", "e1.!!!", "e1.AAAA", 7, encode_cursor("EG-001") + "x"])
def test_an_invalid_cursor_is_invalid_params(backend: FakeBackend, cursor: object) -> None:
    outcome = call_modern(backend, "resources/list", {"cursor": cursor})
    assert outcome.status == 400
    assert error_of(outcome) == {
        "code": -32602,
        "message": "Invalid cursor",
        "data": {"code": "invalid_cursor", "param": "params.cursor"},
    }


def test_cursors_round_trip() -> None:
    assert decode_cursor(encode_cursor("EG-202")) == "EG-202"


def test_resources_read_returns_the_entry_markdown(backend: FakeBackend) -> None:
    result = result_of(call_modern(backend, "resources/read", {"uri": "evergreen://evergreen/EG-202"}))
    found = backend.entry(entry_id="EG-202", version=None)
    assert isinstance(found, EntryFound)
    assert result["contents"] == [
        {"uri": "evergreen://evergreen/EG-202", "mimeType": "text/markdown", "text": found.markdown}
    ]
    assert found.markdown.startswith("# EG-202 Token 预算纪律\n")


@pytest.mark.parametrize(
    "uri",
    [
        "evergreen://evergreen/EG-999",
        "evergreen://other/EG-202",
        "evergreen://evergreen/",
        "evergreen://evergreen/EG-202/extra",
        "file:///etc/passwd",
        "evergreen://evergreen",
    ],
)
def test_unknown_and_foreign_resources_read_alike(backend: FakeBackend, uri: str) -> None:
    outcome = call_modern(backend, "resources/read", {"uri": uri})
    assert outcome.status == 400
    assert error_of(outcome) == {
        "code": -32602,
        "message": "Resource not found",
        "data": {"code": "not_found", "uri": uri},
    }


def test_another_namespace_cannot_read_this_namespace_entries() -> None:
    acme = FakeBackend(info=demo_info(slug="acme"))
    outcome = call_modern(acme, "resources/read", {"uri": "evergreen://evergreen/EG-202"})
    assert error_of(outcome)["data"] == {"code": "not_found", "uri": "evergreen://evergreen/EG-202"}
    assert acme.calls == []


def test_a_retired_resource_is_not_found_with_its_tombstone(backend: FakeBackend) -> None:
    outcome = call_modern(backend, "resources/read", {"uri": "evergreen://evergreen/EG-009"})
    error = error_of(outcome)
    assert error["code"] == -32602
    assert error["message"] == "Resource not found: EG-009 was retired"
    assert error["data"]["tombstone"]["replacedBy"] == "EG-101"


def test_the_template_points_at_this_namespace(backend: FakeBackend) -> None:
    templates = result_of(call_modern(backend, "resources/templates/list"))["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "evergreen://evergreen/{id}"


def test_prompts_list_names_the_packs(backend: FakeBackend) -> None:
    prompts = result_of(call_modern(backend, "prompts/list"))["prompts"]
    assert prompts == [
        {"name": "chat", "title": "Prompt pack · chat", "description": "Rules for chat assistants."},
        {"name": "coding", "title": "Prompt pack · coding", "description": "Rules for coding assistants."},
    ]


def test_prompts_get_returns_the_pack_as_a_user_message(backend: FakeBackend) -> None:
    result = result_of(call_legacy(backend, "prompts/get", {"name": "coding", "arguments": {}}))
    assert result == {
        "description": "Rules for coding assistants.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "在回答之前先读取 /llms.txt（coding）。"}}],
    }


def test_an_unknown_prompt_is_invalid_params(backend: FakeBackend) -> None:
    outcome = call_legacy(backend, "prompts/get", {"name": "research"})
    assert error_of(outcome) == {
        "code": -32602,
        "message": "Unknown prompt: research",
        "data": {"code": "unknown_prompt", "name": "research"},
    }

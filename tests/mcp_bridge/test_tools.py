"""The tool registry: definitions, argument validation, results and tool errors (through tools/call)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp_types import Tool as SdkTool

from mcp_bridge.ports import ParamError
from mcp_bridge.tools import build_tools
from tests.mcp_bridge.conftest import call_legacy, call_modern, error_of, result_of
from tests.mcp_bridge.fakes import SECRET_BODY_MARKER, FakeBackend, demo_info

TOOL_NAMES = [
    "search_context",
    "get_entry",
    "get_prompt_pack",
    "get_metrics",
    "submit_feedback",
    "verify_citations",
    "explain_context",
]


def call(backend: FakeBackend, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return result_of(call_modern(backend, "tools/call", {"name": name, "arguments": arguments}))


def texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"]]


def test_tools_list_names_the_five_tools_in_a_fixed_order(backend: FakeBackend) -> None:
    tools = result_of(call_modern(backend, "tools/list"))["tools"]
    assert [tool["name"] for tool in tools] == TOOL_NAMES


@pytest.mark.parametrize("tool", build_tools(demo_info()), ids=lambda tool: tool.name)
def test_each_definition_is_a_valid_sdk_tool_with_valid_2020_12_schemas(tool: Any) -> None:
    definition = tool.definition()
    SdkTool.model_validate(definition)
    Draft202012Validator.check_schema(definition["inputSchema"])
    Draft202012Validator.check_schema(definition["outputSchema"])
    assert definition["inputSchema"]["type"] == "object"
    assert definition["annotations"]["title"] == definition["title"]


def test_descriptions_state_units_ranges_and_errors() -> None:
    tools = {tool.name: tool.definition()["description"] for tool in build_tools(demo_info())}
    assert "tokens" in tools["search_context"] and "[200, 8000]" in tools["search_context"]
    assert "default 2000" in tools["search_context"] and "1-50" in tools["search_context"]
    assert "nearest" in tools["get_entry"] and "tombstone" in tools["get_entry"]
    assert "never changes published content" in tools["submit_feedback"]
    assert all("Errors" in text or "No arguments" in text for text in tools.values())


def test_descriptions_never_quote_entry_text(backend: FakeBackend) -> None:
    listing = json.dumps(result_of(call_modern(backend, "tools/list")), ensure_ascii=False)
    assert SECRET_BODY_MARKER not in listing
    for entry in backend.entries:
        assert entry["title"] not in listing and entry["summary"] not in listing


def test_only_the_tools_that_record_something_are_not_read_only() -> None:
    hints = {tool.name: tool.definition()["annotations"]["readOnlyHint"] for tool in build_tools(demo_info())}
    assert hints == {name: name not in {"submit_feedback", "verify_citations"} for name in TOOL_NAMES}
    feedback = next(tool for tool in build_tools(demo_info()) if tool.name == "submit_feedback")
    assert feedback.annotations["destructiveHint"] is False


def test_the_category_enum_is_the_namespace_categories(backend: FakeBackend) -> None:
    search = result_of(call_modern(backend, "tools/list"))["tools"][0]
    assert search["inputSchema"]["properties"]["category"]["enum"] == list(backend.info.categories)


def test_search_returns_the_pack_as_structured_content_and_entries_as_quoted_text(backend: FakeBackend) -> None:
    result = call(backend, "search_context", {"query": "token", "budget": 1200, "limit": 3})
    pack = result["structuredContent"]
    assert result["isError"] is False
    text = texts(result)[0]
    assert text.count("[ENTRY | ") == text.count("\n[/ENTRY]") == len(pack["entries"]) == 1
    assert f"{pack['entries'][0]['id']} v1" in text and pack["rules"][-1] in text
    assert pack["query"] == {"topic": "token", "budget": 1200, "category": None}
    assert [entry["id"] for entry in pack["entries"]] == ["EG-202"]
    assert pack == backend.context(topic="token", budget=1200, category=None, limit=3)


def test_search_clamps_the_budget_like_the_rest_api(backend: FakeBackend) -> None:
    assert call(backend, "search_context", {"query": "", "budget": 50})["structuredContent"]["budget"] == 200
    assert call(backend, "search_context", {"query": "", "budget": 99_999})["structuredContent"]["budget"] == 8000


def test_search_passes_category_and_limit_through(backend: FakeBackend) -> None:
    pack = call(backend, "search_context", {"query": "", "category": "rule", "limit": 1})["structuredContent"]
    assert [entry["id"] for entry in pack["entries"]] == ["EG-201"]


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({}, "$"),
        ({"query": 7}, "$.query"),
        ({"query": "x" * 501}, "$.query"),
        ({"query": "x", "budget": "2000"}, "$.budget"),
        ({"query": "x", "budget": 1.5}, "$.budget"),
        ({"query": "x", "limit": 0}, "$.limit"),
        ({"query": "x", "limit": 51}, "$.limit"),
        ({"query": "x", "category": "poetry"}, "$.category"),
        ({"query": "x", "unexpected": True}, "$"),
    ],
)
def test_arguments_outside_the_schema_are_tool_errors_naming_the_argument(
    backend: FakeBackend, arguments: dict[str, Any], where: str
) -> None:
    result = call(backend, "search_context", arguments)
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert texts(result)[0].startswith(f"Invalid arguments for search_context: {where}: ")
    assert backend.calls == []


def test_a_long_invalid_value_is_not_echoed_in_full(backend: FakeBackend) -> None:
    result = call(backend, "search_context", {"query": "x" * 5000})
    assert len(texts(result)[0]) < 400


def test_backend_param_errors_become_tool_errors(backend: FakeBackend) -> None:
    result = call(backend, "search_context", {"query": "bad\x07topic"})
    assert result["isError"] is True
    assert json.loads(texts(result)[1]) == {"code": "invalid_topic", "error": "invalid_topic", "param": "$.query"}


def test_get_entry_returns_the_entry(backend: FakeBackend) -> None:
    result = call(backend, "get_entry", {"id": "EG-202"})
    assert result["structuredContent"] == backend.entries[3]
    quoted = texts(result)[0]
    assert "[ENTRY | unrecorded | EG-202 v1 | sha256:" in quoted and quoted.endswith("[/ENTRY]")
    assert backend.entries[3]["body"] in quoted


def test_get_entry_for_a_retired_id_says_it_is_gone_with_its_tombstone(backend: FakeBackend) -> None:
    result = call(backend, "get_entry", {"id": "EG-009"})
    assert result["isError"] is True
    message, details = texts(result)
    assert message == (
        "EG-009 is gone: it was retired on 2026-08-01 (merged into EG-101). "
        "It was replaced by EG-101; call get_entry with that ID."
    )
    assert json.loads(details) == {
        "code": "gone",
        "error": "gone",
        "tombstone": {
            "id": "EG-009",
            "title": "旧端点说明",
            "retiredAt": "2026-08-01T09:00:00Z",
            "reason": "merged into EG-101",
            "replacedBy": "EG-101",
        },
    }


def test_a_retired_id_without_replacement_says_so_plainly(backend: FakeBackend) -> None:
    message = texts(call(backend, "get_entry", {"id": "EG-010"}))[0]
    assert message == "EG-010 is gone: it was retired on 2026-07-01 (no longer true)."


def test_get_entry_for_an_unknown_id_names_the_three_nearest(backend: FakeBackend) -> None:
    result = call(backend, "get_entry", {"id": "EG-203"})
    message, details = texts(result)
    assert result["isError"] is True
    assert message == "There is no entry EG-203 in this knowledge base. The nearest IDs are: EG-202, EG-201, EG-301."
    assert json.loads(details) == {
        "code": "not_found",
        "error": "not_found",
        "id": "EG-203",
        "nearest": ["EG-202", "EG-201", "EG-301"],
    }


def test_get_entry_with_an_unknown_version_is_a_tool_error(backend: FakeBackend) -> None:
    result = call(backend, "get_entry", {"id": "EG-202", "version": 7})
    assert result["isError"] is True and "$.version" in texts(result)[0]


def test_get_prompt_pack_returns_the_pack(backend: FakeBackend) -> None:
    result = call(backend, "get_prompt_pack", {"scenario": "coding"})
    assert result["structuredContent"]["scenario"] == "coding"
    assert "/llms.txt" in result["structuredContent"]["text"]


def test_get_prompt_pack_for_a_missing_pack_is_a_tool_error(backend: FakeBackend) -> None:
    result = call(backend, "get_prompt_pack", {"scenario": "research"})
    assert result["isError"] is True
    assert texts(result)[0] == "This knowledge base has no prompt pack for the scenario research."


def test_get_prompt_pack_refuses_scenarios_outside_the_four(backend: FakeBackend) -> None:
    assert call(backend, "get_prompt_pack", {"scenario": "legal"})["isError"] is True


def test_get_metrics_returns_the_metrics(backend: FakeBackend) -> None:
    assert call(backend, "get_metrics", {})["structuredContent"] == backend.metrics()


def test_get_metrics_takes_no_arguments(backend: FakeBackend) -> None:
    assert call(backend, "get_metrics", {"verbose": True})["isError"] is True


def test_submit_feedback_queues_for_review(backend: FakeBackend) -> None:
    arguments = {"entryId": "EG-202", "query": "token", "kind": "outdated", "message": "The budget tiers changed."}
    result = call(backend, "submit_feedback", arguments)
    assert result["structuredContent"] == {"feedbackId": "FB-1", "status": "queued_for_review"}
    assert backend.feedback == [arguments]
    assert backend.entries[3]["body"].endswith(SECRET_BODY_MARKER)


@pytest.mark.parametrize(
    "arguments",
    [
        {"kind": "outdated", "message": ""},
        {"kind": "praise", "message": "nice"},
        {"kind": "other", "message": "x" * 2001},
        {"kind": "other", "message": "ok", "query": "q" * 501},
        {"kind": "other", "message": "ok", "entryId": ""},
        {"message": "no kind"},
    ],
)
def test_submit_feedback_enforces_its_caps(backend: FakeBackend, arguments: dict[str, Any]) -> None:
    assert call(backend, "submit_feedback", arguments)["isError"] is True
    assert backend.feedback == []


def test_submit_feedback_over_the_limit_says_when_to_retry(backend: FakeBackend) -> None:
    backend.feedback_allowance = 0
    result = call(backend, "submit_feedback", {"kind": "other", "message": "hello"})
    assert result["isError"] is True
    assert texts(result)[0] == "Too many feedback submissions; retry after 42 seconds."
    assert json.loads(texts(result)[1]) == {"code": "rate_limited", "error": "rate_limited", "retryAfter": 42}


def test_submit_feedback_for_an_unknown_entry_is_a_tool_error(backend: FakeBackend) -> None:
    result = call(backend, "submit_feedback", {"entryId": "EG-999", "kind": "incorrect", "message": "?"})
    assert result["isError"] is True and "$.entryId" in texts(result)[0]


def test_a_payload_outside_the_output_schema_is_an_internal_error(backend: FakeBackend) -> None:
    backend.bad_pack = True
    outcome = call_modern(backend, "tools/call", {"name": "search_context", "arguments": {"query": "x"}})
    assert error_of(outcome)["code"] == -32603


def test_tool_errors_are_results_not_protocol_errors_in_the_legacy_era_too(backend: FakeBackend) -> None:
    result = result_of(call_legacy(backend, "tools/call", {"name": "get_entry", "arguments": {"id": "EG-009"}}))
    assert result["isError"] is True


def test_a_param_error_keeps_its_code(backend: FakeBackend) -> None:
    backend.fail_with = ParamError("invalid_topic", "bad", "topic")
    result = call(backend, "search_context", {"query": "x"})
    assert json.loads(texts(result)[1])["error"] == "invalid_topic"

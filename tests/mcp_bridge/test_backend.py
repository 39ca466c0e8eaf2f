"""The Django backend behind MCP and A2A: the REST engine's answers, earlier versions, pages, and namespace walls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from knowledge.models import A2ATask, Feedback, Namespace
from knowledge.retrieval.contract.lookups import EntryFound, EntryGone, EntryMissing
from knowledge.services.imports import entries_import, entries_parse
from mcp_bridge.ports import ParamError
from tests.factories import UserFactory
from tests.mcp_bridge.conftest import legacy_request
from tests.mcp_bridge.http_calls import details, modern, post, tool
from tests.servingfixtures import alpha, alpha_rows, beta, clean_serving_state, publish

__all__ = ["alpha", "beta", "clean_serving_state"]

pytestmark = pytest.mark.django_db


def test_search_context_is_the_rest_body_for_the_same_query(client: Client, alpha: Namespace) -> None:
    rest = client.get("/t/alpha/api/context", {"topic": "token budget", "budget": "900"})
    result = tool(client, "/t/alpha/mcp", "search_context", {"query": "token budget", "budget": 900})

    assert result["structuredContent"] == rest.json()
    assert result["content"][0]["text"].encode() != b""  # and the same JSON as text for clients without structure


def test_rest_parameter_errors_become_tool_errors(client: Client, alpha: Namespace) -> None:
    control = details(tool(client, "/t/alpha/mcp", "search_context", {"query": "token\u0007"}))

    assert control == {"code": "invalid_topic", "error": "invalid_topic", "param": "$.query"}


def test_it_hides_other_namespaces_entries(client: Client, alpha: Namespace, beta: Namespace) -> None:
    search = tool(client, "/t/alpha/mcp", "search_context", {"query": "zeppelin token"})
    foreign = tool(client, "/t/alpha/mcp", "get_entry", {"id": "BE-001"})
    listed = modern(client, "/t/alpha/mcp", "resources/list").json()["result"]
    read = modern(client, "/t/alpha/mcp", "resources/read", {"uri": "evergreen://beta/BE-001"})
    disguised = modern(client, "/t/alpha/mcp", "resources/read", {"uri": "evergreen://alpha/BE-001"})

    assert all(entry["id"].startswith("AL-") for entry in search["structuredContent"]["entries"])
    assert "BE-" not in json.dumps(search, ensure_ascii=False)
    assert details(foreign)["error"] == "not_found"
    assert all(not nearest.startswith("BE-") for nearest in details(foreign)["nearest"])
    assert [r["name"] for r in listed["resources"]] == ["AL-001", "AL-002", "AL-201"]
    assert read.status_code == disguised.status_code == 400
    assert read.json()["error"]["code"] == disguised.json()["error"]["code"] == -32602


def test_feedback_stays_in_its_namespace(client: Client, alpha: Namespace, beta: Namespace) -> None:
    arguments = {"kind": "incorrect", "message": "Alpha ships on Wednesdays now.", "entryId": "AL-001"}
    stored = tool(client, "/t/alpha/mcp", "submit_feedback", arguments)
    foreign = tool(client, "/t/alpha/mcp", "submit_feedback", {**arguments, "entryId": "BE-001"})

    assert stored["structuredContent"]["status"] == "queued_for_review"
    assert details(foreign) == {"code": "unknown_entry", "error": "unknown_entry", "param": "$.entryId"}
    assert list(Feedback.objects.values_list("namespace__slug", "entry_public_id", "source")) == [
        ("alpha", "AL-001", "mcp")
    ]
    assert not Feedback.objects.filter(namespace=beta).exists()


def test_a2a_tasks_stay_in_their_namespace(client: Client, alpha: Namespace, beta: Namespace) -> None:
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": "token"}]}},
    }
    task = post(client, "/t/alpha/a2a", send).json()["result"]
    get = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task["id"]}}

    assert post(client, "/t/alpha/a2a", get).json()["result"]["id"] == task["id"]
    assert post(client, "/t/beta/a2a", get).json()["error"]["code"] == -32001
    assert A2ATask.objects.get().namespace_id == alpha.pk


def test_an_earlier_published_version_is_served_on_request(client: Client, alpha: Namespace) -> None:
    rows = alpha_rows()
    rows[0] = {**rows[0], "title": "Alpha is a renamed namespace"}
    publish(alpha, rows)

    current = tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-001"})["structuredContent"]
    first = tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-001", "version": 1})["structuredContent"]
    unknown = details(tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-001", "version": 9}))

    assert (current["version"], current["title"]) == (2, "Alpha is a renamed namespace")
    assert (first["version"], first["title"]) == (1, "Alpha is a test namespace")
    assert unknown == {"code": "unknown_version", "error": "unknown_version", "param": "$.version"}


def test_a_version_published_after_the_active_release_stays_invisible(client: Client, alpha: Namespace) -> None:
    rows = alpha_rows()
    person: Any = UserFactory(username="late-publisher")
    checker: Any = UserFactory(username="late-checker")
    changed = [{**rows[0], "title": "Not released yet"}]
    entries_import(
        namespace=alpha,
        items=entries_parse(json.dumps(r) for r in changed),
        actor=person,
        reviewer=checker,
        publish=True,
    )  # published, but its release build (on commit) never ran in this test transaction

    newer = details(tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-001", "version": 2}))
    current = tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-001"})["structuredContent"]

    assert newer["param"] == "$.version"
    assert current["title"] == "Alpha is a test namespace"


def test_lookups_map_to_the_ports_types(alpha: Namespace, rf: Any) -> None:
    from gateway.gate import request_gate
    from knowledge.services.entries import entry_retire
    from knowledge.services.releases import release_build
    from mcp_bridge.backend import DjangoBackend

    entry_retire(entry=alpha.entries.get(public_id="AL-002"), actor=None, reason="Obsolete.", check_permission=False)
    release_build(namespace_id=alpha.pk)
    gate = request_gate(rf.post("/t/alpha/mcp"), namespace="alpha")
    backend = DjangoBackend(gate=gate, base_url="http://testserver/t/alpha", source="mcp")

    assert isinstance(backend.entry(entry_id="AL-001", version=None), EntryFound)
    gone = backend.entry(entry_id="AL-002", version=None)
    assert isinstance(gone, EntryGone) and gone.tombstone.reason == "Obsolete."
    missing = backend.entry(entry_id="AL-007", version=None)
    assert isinstance(missing, EntryMissing) and missing.nearest == ("AL-001", "AL-201")
    with pytest.raises(ParamError) as category:
        backend.context(topic="x", budget=None, category="gossip", limit=None)
    assert (category.value.code, category.value.param) == ("unknown_category", "category")
    first = backend.entry_page(after=None, size=1)
    second = backend.entry_page(after=first.next_after, size=1)
    assert ([i.id for i in first.items], first.next_after) == (["AL-001"], "AL-001")
    assert ([i.id for i in second.items], second.next_after) == (["AL-201"], None)
    info = backend.namespace()
    assert (info.base_url, info.id_prefix, info.public) == ("http://testserver/t/alpha", "AL", True)


def test_the_bare_route_serves_only_the_default_namespace(client: Client, alpha: Namespace) -> None:
    prefixed = post(client, "/t/alpha/mcp", legacy_request("ping"))
    bare = post(client, "/mcp", legacy_request("ping"))  # the default namespace (evergreen) is not loaded here

    assert (prefixed.status_code, bare.status_code) == (200, 404)


def test_a_warm_mcp_search_costs_no_query(
    client: Client, alpha: Namespace, django_assert_num_queries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge.selectors import serving

    monkeypatch.setattr(serving, "NAMESPACE_TTL_SECONDS", 3600.0)  # however slow the machine, stay warm
    tool(client, "/t/alpha/mcp", "search_context", {"query": "token budget"})  # loads namespace and release

    with django_assert_num_queries(0):
        result = tool(client, "/t/alpha/mcp", "search_context", {"query": "token budget"})
        tools = modern(client, "/t/alpha/mcp", "tools/list")

    assert result["isError"] is False and tools.status_code == 200

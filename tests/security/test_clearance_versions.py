"""?version=N honours sensitivity: an earlier version above the caller's clearance answers as an unknown version.

The cast: no key, a public key, an internal key and a restricted key, in a public namespace (alpha) and a
private one (beta). AL-901 was internal in version 1 and public in version 2; AL-902 restricted, then public.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from knowledge.models import Namespace
from knowledge.services.api_keys import api_key_create
from tests.mcp_bridge.http_calls import tool
from tests.servingfixtures import alpha_rows, beta_rows, clean_serving_state, no_rate_limit, publish

__all__ = ["clean_serving_state", "no_rate_limit"]

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_rate_limit")]

INTERNAL_MARK = "HANGARCODE4417"
RESTRICTED_MARK = "MOONBASESEVEN"


def _hidden(prefix: str, *, public: bool) -> list[dict[str, Any]]:
    """Two entries published above public first, then (public=True) made public without the secret."""
    base = {"category": "fact", "tags": ["zeppelin"], "updated": "2026-08-01"}
    return [
        {
            **base,
            "id": f"{prefix}-901",
            "title": "Zeppelin hangar access",
            "summary": "How staff open the zeppelin hangar.",
            "body": "The hangar opens at the north gate." if public else f"The hangar opens with code {INTERNAL_MARK}.",
            "sensitivity": "public" if public else "internal",
        },
        {
            **base,
            "id": f"{prefix}-902",
            "title": "Zeppelin board meetings",
            "summary": "Where the zeppelin board meets.",
            "body": "The board meets every quarter." if public else f"The board meets at {RESTRICTED_MARK}.",
            "sensitivity": "public" if public else "restricted",
        },
    ]


def _key(namespace: Namespace, clearance: str) -> str:
    _, raw = api_key_create(
        namespace=namespace, name=clearance, actor=None, clearance=clearance, check_permission=False
    )
    return raw


@pytest.fixture
def keys(ns_a: Namespace, ns_b: Namespace) -> dict[str, str | None]:
    """Alpha (public) and beta (private), each with two entries whose version 1 was not public."""
    publish(ns_a, [*alpha_rows(), *_hidden("AL", public=False)])
    publish(ns_a, [*alpha_rows(), *_hidden("AL", public=True)])
    Namespace.objects.filter(pk=ns_b.pk).update(is_public=False)
    publish(ns_b, [*beta_rows(), *_hidden("BE", public=False)])
    publish(ns_b, [*beta_rows(), *_hidden("BE", public=True)])
    return {
        "none": None,
        "alpha public": _key(ns_a, "public"),
        "alpha internal": _key(ns_a, "internal"),
        "alpha restricted": _key(ns_a, "restricted"),
        "beta public": _key(ns_b, "public"),
        "beta internal": _key(ns_b, "internal"),
    }


def _headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _unknown_like(response: Any, twin: Any, version: int, twin_version: int) -> None:
    """`response` answers exactly as `twin` (a version that never existed) does, but for the number."""
    assert response.status_code == twin.status_code
    assert response.content.decode() == twin.content.decode().replace(f"version {twin_version}", f"version {version}")


@pytest.mark.parametrize(
    ("slug", "caller", "entry"),
    [
        ("alpha", "none", "AL-901"),
        ("alpha", "alpha public", "AL-901"),
        ("alpha", "none", "AL-902"),
        ("alpha", "alpha internal", "AL-902"),
        ("beta", "beta public", "BE-901"),
        ("beta", "beta internal", "BE-902"),
    ],
)
@pytest.mark.parametrize("suffix", ["", ".md"])
def test_rest_hides_an_earlier_version_above_the_callers_clearance(
    client: Client, keys: dict[str, str | None], slug: str, caller: str, entry: str, suffix: str
) -> None:
    headers = _headers(keys[caller])
    hidden = client.get(f"/t/{slug}/api/entries/{entry}{suffix}?version=1", headers=headers)
    never = client.get(f"/t/{slug}/api/entries/{entry}{suffix}?version=3", headers=headers)

    assert hidden.status_code == 400
    assert INTERNAL_MARK not in hidden.content.decode() and RESTRICTED_MARK not in hidden.content.decode()
    _unknown_like(hidden, never, 1, 3)
    if not suffix:
        assert hidden.json()["error"]["code"] == "unknown_version"


@pytest.mark.parametrize(
    ("slug", "caller", "entry", "mark"),
    [
        ("alpha", "alpha internal", "AL-901", INTERNAL_MARK),
        ("alpha", "alpha restricted", "AL-901", INTERNAL_MARK),
        ("alpha", "alpha restricted", "AL-902", RESTRICTED_MARK),
        ("beta", "beta internal", "BE-901", INTERNAL_MARK),
    ],
)
def test_rest_serves_an_earlier_version_the_caller_is_cleared_for(
    client: Client, keys: dict[str, str | None], slug: str, caller: str, entry: str, mark: str
) -> None:
    headers = _headers(keys[caller])
    answer = client.get(f"/t/{slug}/api/entries/{entry}?version=1", headers=headers)
    markdown = client.get(f"/t/{slug}/api/entries/{entry}.md?version=1", headers=headers)

    assert answer.status_code == 200 and answer.json()["version"] == 1 and mark in answer.content.decode()
    assert markdown.status_code == 200 and mark in markdown.content.decode()


def _mcp_get_entry(client: Client, path: str, key: str | None, version: int) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_entry", "arguments": {"id": "AL-901", "version": version}},
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    return client.post(path, json.dumps(body), content_type="application/json", headers={**headers, **_headers(key)})


def test_mcp_get_entry_hides_an_earlier_version_above_the_callers_clearance(
    client: Client, keys: dict[str, str | None]
) -> None:
    hidden = _mcp_get_entry(client, "/t/alpha/mcp", None, 1)
    never = _mcp_get_entry(client, "/t/alpha/mcp", None, 3)

    assert INTERNAL_MARK not in hidden.content.decode()
    _unknown_like(hidden, never, 1, 3)
    assert INTERNAL_MARK in _mcp_get_entry(client, "/t/alpha/mcp", keys["alpha internal"], 1).content.decode()


def test_mcp_get_entry_through_the_sdk_shaped_helper_hides_it_too(client: Client, keys: dict[str, str | None]) -> None:
    result = tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-902", "version": 1})

    assert RESTRICTED_MARK not in json.dumps(result)


def _a2a_get_entry(client: Client, key: str | None, version: int) -> Any:
    data = {"skill": "get_entry", "arguments": {"id": "AL-901", "version": version}}
    message = {"role": "user", "messageId": "m1", "parts": [{"kind": "data", "data": data}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    return client.post("/t/alpha/a2a", json.dumps(body), content_type="application/json", headers=_headers(key))


def test_the_a2a_get_entry_skill_hides_an_earlier_version_above_the_callers_clearance(
    client: Client, keys: dict[str, str | None]
) -> None:
    hidden = _a2a_get_entry(client, None, 1)
    never = _a2a_get_entry(client, None, 3)

    assert INTERNAL_MARK not in hidden.content.decode()
    assert hidden.json()["error"]["data"]["error"] == "unknown_version"
    _unknown_like(hidden, never, 1, 3)
    assert INTERNAL_MARK in json.dumps(_a2a_get_entry(client, keys["alpha internal"], 1).json())


@pytest.mark.parametrize("suffix", ["", ".md"])
def test_an_earlier_internal_version_read_with_a_key_is_never_cached_as_public(
    client: Client, keys: dict[str, str | None], suffix: str
) -> None:
    """AL-901 is public today, so the internal key reads the public view; its version 1 must still stay private."""
    answer = client.get(f"/t/alpha/api/entries/AL-901{suffix}?version=1", headers=_headers(keys["alpha internal"]))

    assert answer.status_code == 200 and INTERNAL_MARK in answer.content.decode()
    assert answer["Cache-Control"].startswith("private")
    assert "Authorization" in answer["Vary"]
    assert client.get("/t/alpha/api/entries/AL-901?version=2")["Cache-Control"].startswith("public")

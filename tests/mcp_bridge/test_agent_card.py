"""/.well-known/agent-card.json: a strict A2A v0.3.0 card per namespace, with seed §10's headers; golden file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from a2a.types import AgentCard
from django.test import Client

from knowledge.models import Namespace
from knowledge.services.api_keys import api_key_create
from tests.servingfixtures import beta, clean_serving_state, demo

__all__ = ["beta", "clean_serving_state", "demo"]

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).resolve().parent / "golden" / "agent-card.json"
REGENERATE = "EVERGREEN_UPDATE_GOLDEN"


def test_the_demo_card_matches_the_golden_file(client: Client, demo: Namespace) -> None:
    actual = json.dumps(client.get("/.well-known/agent-card.json").json(), ensure_ascii=False, indent=2) + "\n"
    if os.environ.get(REGENERATE) == "1":
        GOLDEN.write_text(actual, encoding="utf-8")
    assert GOLDEN.exists(), f"{GOLDEN} is missing; create it with {REGENERATE}=1 .venv/bin/pytest {__file__}"
    assert actual == GOLDEN.read_text(encoding="utf-8"), (
        "The agent card differs from tests/mcp_bridge/golden/agent-card.json. "
        f"If the change is intended, regenerate it with `{REGENERATE}=1 .venv/bin/pytest "
        "tests/mcp_bridge/test_agent_card.py` and review `git diff tests/mcp_bridge/golden`."
    )


@pytest.mark.parametrize("prefix", ["", "/t/evergreen"])
def test_the_card_validates_and_names_endpoints_under_its_prefix(client: Client, demo: Namespace, prefix: str) -> None:
    response = client.get(f"{prefix}/.well-known/agent-card.json")

    card = AgentCard.model_validate(response.json())
    assert card.url == f"http://testserver{prefix}/a2a"
    assert card.documentation_url == f"http://testserver{prefix}/llms.txt"
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Link"] == f'<{prefix}/llms.txt>; rel="describedby"; type="text/markdown"'


def test_the_card_has_an_etag_304_and_head(client: Client, demo: Namespace) -> None:
    full = client.get("/t/evergreen/.well-known/agent-card.json")
    cached = client.get("/t/evergreen/.well-known/agent-card.json", headers={"If-None-Match": full["ETag"]})
    head = client.head("/t/evergreen/.well-known/agent-card.json")

    assert full["Cache-Control"] == "public, max-age=900"
    assert cached.status_code == 304 and cached["ETag"] == full["ETag"]
    assert head.status_code == 200 and head.content == b""
    assert (head["ETag"], head["Content-Length"]) == (full["ETag"], full["Content-Length"])


def test_a_private_namespace_card_needs_a_key_and_declares_bearer(client: Client, beta: Namespace) -> None:
    beta.is_public = False
    beta.save(update_fields=["is_public"])
    _, key = api_key_create(namespace=beta, name="agent", actor=None, check_permission=False)

    hidden = client.get("/t/beta/.well-known/agent-card.json")
    shown = client.get("/t/beta/.well-known/agent-card.json", headers={"Authorization": f"Bearer {key}"})

    assert hidden.status_code == 404
    card: dict[str, Any] = shown.json()
    AgentCard.model_validate(card)
    assert card["security"] == [{"apiKey": []}]
    assert card["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    assert shown["Cache-Control"] == "private, max-age=900"
    assert "Authorization" in shown["Vary"]


@pytest.mark.parametrize("prefix", ["", "/t/evergreen"])
def test_every_extension_uri_in_the_card_resolves_to_its_specification(
    client: Client, demo: Namespace, prefix: str
) -> None:
    card = client.get(f"{prefix}/.well-known/agent-card.json").json()
    for extension in card["capabilities"]["extensions"]:
        assert extension["uri"].startswith("http://testserver/a2a/extensions/")
        document = client.get(extension["uri"].removeprefix("http://testserver"))
        assert document.status_code == 200
        assert document["Content-Type"] == "text/markdown; charset=utf-8"
        assert document["ETag"] and document["Cache-Control"] == "public, max-age=900"
        text = document.content.decode()
        assert text.startswith("# Evergreen") and "version 1" in text
        assert all(f"`{name}`" in text for name in extension["params"])


def test_an_unknown_extension_path_is_not_found(client: Client) -> None:
    response = client.get("/a2a/extensions/telepathy/v1")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"

"""The public discovery documents are readable from any browser origin (SEP-2127 §CORS Requirements; QA).

/mcp/server-card and /.well-known/mcp/catalog.json answer `Access-Control-Allow-Origin: *`; the A2A agent
card did not, so a browser A2A client could not discover the agent.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("prefix", ["", "/t/evergreen"])
def test_the_mcp_discovery_documents_are_readable_from_any_origin(client: Any, demo: Any, prefix: str) -> None:
    for path in ("/mcp/server-card", "/.well-known/mcp/catalog.json"):
        assert client.get(prefix + path)["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("prefix", ["", "/t/evergreen"])
def test_the_agent_card_is_readable_from_any_origin_like_the_server_card(client: Any, demo: Any, prefix: str) -> None:
    card = client.get(f"{prefix}/.well-known/agent-card.json")
    server_card = client.get(f"{prefix}/mcp/server-card")

    assert card.status_code == 200
    assert card.get("Access-Control-Allow-Origin") == server_card["Access-Control-Allow-Origin"] == "*"
    assert card.get("Access-Control-Allow-Methods") == server_card["Access-Control-Allow-Methods"]

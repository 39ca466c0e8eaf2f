"""A namespace's agent routes (MCP, A2A, agent and server cards), mounted at / and /t/<namespace>/."""

from __future__ import annotations

from django.urls import URLPattern, path

from mcp_bridge import views
from mcp_bridge.a2a_card import A2A_PATH, WELL_KNOWN_PATH
from mcp_bridge.a2a_extensions import EXTENSIONS_PATH
from mcp_bridge.server_card import CARD_PATH, CATALOG_PATH, WELL_KNOWN_CARD_PATH

urlpatterns: list[URLPattern] = [
    path("mcp", views.mcp_post, name="mcp"),
    path(A2A_PATH.lstrip("/"), views.a2a_post, name="a2a"),
    path(WELL_KNOWN_PATH.lstrip("/"), views.agent_card_get, name="agent-card"),
    path(CARD_PATH.lstrip("/"), views.server_card_get, name="mcp-server-card"),
    path(WELL_KNOWN_CARD_PATH.lstrip("/"), views.server_card_get, name="mcp-server-card-well-known"),
    path(CATALOG_PATH.lstrip("/"), views.mcp_catalog_get, name="mcp-catalog"),
]

# One per deployment (evergreen_site.urls mounts them at the root only): the same for every namespace.
deployment_urlpatterns: list[URLPattern] = [
    path(f"{EXTENSIONS_PATH.strip('/')}/<path:name>", views.a2a_extension_get, name="a2a-extension"),
]

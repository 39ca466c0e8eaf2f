"""App configuration for the MCP and A2A bridge."""

from django.apps import AppConfig


class McpBridgeConfig(AppConfig):
    name = "mcp_bridge"
    verbose_name = "MCP and A2A"

"""MCP (Streamable HTTP) and A2A endpoints over the same engine and releases as the REST API."""

"""MCP (2026-07-28 and handshake-era revisions) and A2A v0.3.0 for Evergreen namespaces, HTTP-free core."""

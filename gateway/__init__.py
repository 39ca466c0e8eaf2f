"""Request plumbing shared by the REST read surface (api) and the MCP/A2A views: namespaces, keys, limits, HTTP."""

"""The one agent contract: what an agent receives about an entry, a tombstone, a missing ID and a pack.

Every channel (REST, MCP, A2A, ``context.json``, OpenAPI, the served JSON Schema) derives its JSON and
its JSON Schemas from the shapes here; adapters translate transport, never shape. Pure: no Django.
Import the submodules (``records``, ``fields``, ``shapes``) directly; this package imports nothing so
``snapshot`` can use ``records`` without a cycle.
"""

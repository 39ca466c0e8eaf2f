"""The OpenAPI description of the REST surface (drf-spectacular), served at /api/schema/ with a docs page."""

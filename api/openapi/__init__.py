"""The OpenAPI 3.1 description of the public routes, served at /api/schema/ with a docs page at /api/docs/."""

"""Thin read views: parse HTTP, call gateway and selectors, return a Reply (gateway.views.read_view finishes it)."""

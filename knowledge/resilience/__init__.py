"""Degrade, never fail: circuit breakers, guarded Redis connections, and what a worker knows about outages."""

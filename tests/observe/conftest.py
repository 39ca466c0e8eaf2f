"""The read-surface fixtures (tests/servingfixtures.py) for the observability tests."""

from tests.servingfixtures import alpha, beta, clean_serving_state, demo, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "demo", "no_rate_limit"]

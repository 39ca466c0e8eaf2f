"""The read-surface fixtures (tests/servingfixtures.py) for the API tests."""

from tests.gateway.replaying import app, django_app, served
from tests.servingfixtures import alpha, beta, clean_serving_state, demo, no_rate_limit

__all__ = ["alpha", "app", "beta", "clean_serving_state", "demo", "django_app", "no_rate_limit", "served"]

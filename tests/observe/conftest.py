"""The read-surface fixtures (tests/servingfixtures.py) for the observability tests."""

from typing import Any

import pytest

from tests.configure import configure
from tests.servingfixtures import alpha, beta, clean_serving_state, demo, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "demo", "no_rate_limit"]


@pytest.fixture(autouse=True)
def _releases_kept(settings: Any) -> None:
    """The fixtures' releases are from September 2026: keep them readable whenever the tests run."""
    configure(settings, release_retention_days=36500)

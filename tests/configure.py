"""Override Evergreen's typed settings in a test: ``configure(settings, rate_limit="3/min")``."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from evergreen_site.settings.env import Rate, parse_rate
from evergreen_site.settings.evergreen import EvergreenSettings

RATE_FIELDS = frozenset(f.name for f in fields(EvergreenSettings) if f.type in {Rate, "Rate"})


def configure(settings: Any, **values: Any) -> None:
    """pytest-django's ``settings`` fixture restores the original record after the test; rates may be strings."""
    parsed = {
        name: parse_rate(value) if name in RATE_FIELDS and isinstance(value, str) else value
        for name, value in values.items()
    }
    settings.EVERGREEN = replace(settings.EVERGREEN, **parsed)

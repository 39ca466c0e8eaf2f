"""Helpers for reading security events out of pytest's caplog."""

from __future__ import annotations

import json
from typing import Any

import pytest

LOGGER = "evergreen.security"


def security_records(caplog: pytest.LogCaptureFixture, kind: str | None = None) -> list[dict[str, Any]]:
    """The events written so far (parsed from the message, which is what a log shipper reads)."""
    found = [json.loads(record.getMessage()) for record in caplog.records if record.name == LOGGER]
    return [record for record in found if kind is None or record["kind"] == kind]


def raw_log(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records if record.name == LOGGER)

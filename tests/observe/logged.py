"""Helpers for the request-log tests: turn the log on, and write what the process buffered as the flusher would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from knowledge.models import RequestLog
from knowledge.requestlog.buffer import buffer
from knowledge.services.request_log import request_log_write
from tests.configure import configure


@pytest.fixture
def logging_on(settings: Any) -> Iterator[None]:
    configure(settings, request_log=True, request_log_sample=1.0)
    buffer.clear()
    yield
    buffer.clear()


def written() -> list[RequestLog]:
    """What the flusher thread and the drain task would write, done here in the test's own transaction."""
    request_log_write(buffer.rows(buffer.drain()))
    return list(RequestLog.objects.order_by("at", "id"))

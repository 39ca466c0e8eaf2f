"""Log records as one JSON object per line (EVERGREEN_LOG_FORMAT=json), each with the request's ID."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from knowledge.telemetry.ids import META_KEY, request_id_current

# Attributes every LogRecord has; anything else was passed with extra= and is written as a field.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "request_id"}


def record_request_id(record: logging.LogRecord) -> str | None:
    """The ID of the request a record names (django.request passes `request`), else the current request's."""
    request = getattr(record, "request", None)
    meta = getattr(request, "META", None)
    found = meta.get(META_KEY) if isinstance(meta, dict) else None
    return found or request_id_current()


def request_described(value: Any) -> Any:
    """An HttpRequest as "GET /path": its repr holds the query string (an agent's topic), which logs never get."""
    method, path = getattr(value, "method", None), getattr(value, "path", None)
    if isinstance(method, str) and isinstance(path, str):
        return f"{method} {path[:200]}"
    return value


class RequestIdFilter(logging.Filter):
    """Stamps each record with the ID of the request being handled (or "-" outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = record_request_id(record) or "-"
        return True


class JsonFormatter(logging.Formatter):
    """{"at", "level", "logger", "message", "request_id", …extra fields, "exception"} on one line."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "at": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or record_request_id(record),
        }
        for name, value in record.__dict__.items():
            if name not in _STANDARD and not name.startswith("_"):
                document[name] = request_described(value) if name == "request" else value
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        # ensure_ascii: a client's control characters or lone surrogates stay escapes, never raw bytes.
        return json.dumps(document, ensure_ascii=True, default=str, separators=(",", ":"))

"""Log records as one JSON object per line (EVERGREEN_LOG_FORMAT=json), each with the request's ID."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from knowledge.telemetry.ids import request_id_current

# Attributes every LogRecord has; anything else was passed with extra= and is written as a field.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "request_id"}


class RequestIdFilter(logging.Filter):
    """Stamps each record with the ID of the request being handled (or "-" outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_current() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """{"at", "level", "logger", "message", "request_id", …extra fields, "exception"} on one line."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "at": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_current(),
        }
        for name, value in record.__dict__.items():
            if name not in _STANDARD and not name.startswith("_"):
                document[name] = value
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        # ensure_ascii: a client's control characters or lone surrogates stay escapes, never raw bytes.
        return json.dumps(document, ensure_ascii=True, default=str, separators=(",", ":"))

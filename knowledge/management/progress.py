"""A progress line on stderr for long-running commands."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Prints `label: done/total (pct) elapsed` at most every `interval` seconds, then a final line."""

    def __init__(self, label: str, *, stream: TextIO | None = None, interval: float = 0.5) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.interval = interval
        self.started = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        percent = 100 * done / total if total else 100
        end = "\n" if done >= total else "\r"
        self.stream.write(f"{self.label}: {done}/{total} ({percent:.0f}%) {now - self.started:.1f}s{end}")
        self.stream.flush()

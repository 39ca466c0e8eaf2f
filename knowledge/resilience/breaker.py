"""A circuit breaker: after a failure, callers skip the dependency for a cool-down instead of waiting on it.

Pure Python (no Django): the clock is injected, so tests step time by hand. One failure opens the
breaker, because the failures that matter here are timeouts: a second caller waiting out the same
hung server would double the cost for nothing. After the cool-down exactly one caller is let through
(half-open); its success closes the breaker, its failure opens it for another cool-down, and a probe
that never reports back simply lets the next caller probe one cool-down later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

CLOSED: Final = "closed"
OPEN: Final = "open"


@dataclass(frozen=True, slots=True)
class BreakerState:
    """What a health check reports: the state, the last error and since when the dependency failed."""

    state: str
    error: str
    failing_since: float | None  # clock time of the first failure of the current outage


class CircuitBreaker:
    def __init__(self, *, name: str, cooldown: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._open_until: float | None = None  # None while closed
        self._error = ""
        self._failing_since: float | None = None

    def allow(self) -> bool:
        """Whether a call may go to the dependency now (False: fail fast without trying)."""
        with self._lock:
            if self._open_until is None:
                return True
            now = self._clock()
            if now < self._open_until:
                return False
            self._open_until = now + self.cooldown  # half-open: this caller probes, the others keep failing fast
            return True

    def success(self) -> None:
        with self._lock:
            self._open_until = None
            self._error = ""
            self._failing_since = None

    def failure(self, error: BaseException | str) -> bool:
        """Open (or re-open) the breaker; True when this failure opened a closed breaker (log it once)."""
        with self._lock:
            now = self._clock()
            opened = self._open_until is None
            self._open_until = now + self.cooldown
            self._error = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
            if self._failing_since is None:
                self._failing_since = now
            return opened

    def state(self) -> BreakerState:
        with self._lock:
            name = CLOSED if self._open_until is None else OPEN
            return BreakerState(name, self._error, self._failing_since)

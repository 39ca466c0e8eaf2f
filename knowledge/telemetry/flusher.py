"""One background thread per process ships, every second, what the hot path only counted or buffered.

Request handlers never wait on a metrics file, Redis or the database for telemetry: they add to
in-process counters and buffers (a dict update, a deque append), and this thread hands the totals
to Prometheus and the request log's queue. The thread starts on first use in each process (a
forked gunicorn or Celery child starts its own) and flushes once more when the process exits.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)

INTERVAL_SECONDS = 1.0

Job = Callable[[], None]


class Flusher:
    def __init__(self, interval: float = INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._jobs: list[Job] = []
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # Tests pause the thread and flush by hand, so nothing writes behind a test's back.
        self.paused = False

    def register(self, job: Job) -> None:
        if job not in self._jobs:
            self._jobs.append(job)

    def ensure_started(self) -> None:
        """Cheap when running (one attribute test); starts the thread on first use in this process."""
        if self._thread is not None or self.paused:
            return
        with self._lock:
            if self._thread is None:
                self._stop.clear()
                thread = threading.Thread(target=self._run, name="evergreen-telemetry", daemon=True)
                thread.start()
                self._thread = thread

    def flush_now(self) -> None:
        """Run every job once, here (tests, process exit)."""
        for job in list(self._jobs):
            try:
                job()
            except Exception:  # telemetry that fails must never take a request or a worker down
                logger.exception("Telemetry flush %s failed", getattr(job, "__name__", job))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.flush_now()

    def after_fork(self) -> None:
        """A forked child has no thread (threads do not survive fork); it starts its own on first use."""
        self._thread = None
        self._lock = threading.Lock()
        self._stop = threading.Event()


flusher = Flusher()
os.register_at_fork(after_in_child=flusher.after_fork)
atexit.register(flusher.flush_now)

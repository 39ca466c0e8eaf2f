"""A real Celery worker process for the tests marked `services`, on the test database and Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    """The URL of the database pytest-django created, for a process of our own."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "") + "@" if s["USER"] else ""
    return f"postgres://{auth}{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def wait_for(predicate: Callable[[], Any], *, timeout: float = 60, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@contextmanager
def celery_worker(*, log: Path, queue: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """Start `celery worker` (prefork, one child) on `queue` and stop it on exit; kill -9 simulates a crash.

    Each test run uses its own queue, so two runs sharing a Redis never take each other's tasks.
    """
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base",
        "DATABASE_URL": test_database_url(),
        "EVERGREEN_DEBUG": "1",
        **env,
    }
    command = [
        *(sys.executable, "-m", "celery", "-A", "evergreen_site", "worker", "--pool", "prefork", "--concurrency", "1"),
        *("--loglevel", "INFO", "--without-gossip", "--without-mingle", "--queues", queue),
    ]
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_for(lambda: b"ready." in log.read_bytes(), timeout=60, what="the Celery worker to start")
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def kill_hard(process: subprocess.Popen[bytes]) -> None:
    """kill -9 the worker and its pool children, as a crashed machine would."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()

"""A real Celery worker process for the tests marked `services`, on the test database and Redis."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import kombu.pools
from django.conf import settings
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

    Each test run uses its own queue, so two runs sharing a Redis never take each other's tasks. The
    worker is stopped as an operator would: SIGTERM to the main process (a warm shutdown that finishes
    the running task and closes its database connections), SIGKILL to the group only if that hangs.
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
    start = log.stat().st_size if log.exists() else 0  # a log shared by several workers: read this one's lines
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_for(lambda: _started(process, log, start), timeout=60, what="the Celery worker to start")
        yield process
    finally:
        stop(process)


def _started(process: subprocess.Popen[bytes], log: Path, start: int) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"the Celery worker exited with {process.returncode}:\n{log.read_text()[-3000:]}")
    return b"ready." in log.read_bytes()[start:]


def stop(process: subprocess.Popen[bytes], *, grace: float = 60) -> None:
    """SIGTERM and wait; the whole process group is killed only when the process does not exit in `grace` s."""
    if process.poll() is None:
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever is left of the group (a pool child of a killed worker)
    process.wait()


def kill_hard(process: subprocess.Popen[bytes]) -> None:
    """kill -9 the worker and its pool children, as a crashed machine would."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def celery_sends_to(app: Any, url: str | None, queue: str = "celery") -> None:
    """Point the Celery app at a broker (None: run tasks in-process again), dropping pooled connections.

    The app keeps its connection and producer pools across a change of `broker_url`; a test that used
    another broker would otherwise leave later tests sending to it.
    """
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None
    kombu.pools.reset()  # the producer pools are global, keyed by connection
    if url is None:
        # Back to the configured broker too: even in-process runs may open a pooled connection.
        app.conf.update(task_always_eager=True, broker_url=settings.CELERY_BROKER_URL, task_default_queue="celery")
    else:
        app.conf.update(task_always_eager=False, broker_url=url, task_default_queue=queue)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def gunicorn(
    port: int, log: Path, *, env: dict[str, str] | None = None, workers: int = 1
) -> Iterator[subprocess.Popen[bytes]]:
    """gunicorn with sync workers on the test database (and the environment's Redis), stopped on exit."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base",
        "DATABASE_URL": test_database_url(),
        "EVERGREEN_DEBUG": "1",
        **(env or {}),
    }
    command = [
        *(sys.executable, "-m", "gunicorn", "evergreen_site.wsgi", "-w", str(workers)),
        *("-b", f"127.0.0.1:{port}"),
    ]
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield process
    finally:
        stop(process)

"""gunicorn settings (gunicorn -c python:evergreen_site.gunicorn): clean Prometheus multiprocess files, and
keep a worker streaming a large file to a slow client alive (knowledge.heartbeat).

When a worker exits its metric files must be marked dead, or its gauges would be reported forever;
at start the directory is emptied, since files left by an earlier run would be counted again.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from prometheus_client import multiprocess

from knowledge.heartbeat import heartbeat_install


def on_starting(server: Any) -> None:
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        shutil.rmtree(directory, ignore_errors=True)
        Path(directory).mkdir(parents=True, exist_ok=True)


def post_fork(server: Any, worker: Any) -> None:
    """A streamed answer tells the arbiter this worker is alive while its client reads (knowledge.heartbeat)."""
    heartbeat_install(worker.notify)


def child_exit(server: Any, worker: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)

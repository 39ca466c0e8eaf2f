"""The /metrics text: this deployment's instruments (all gunicorn workers in multiprocess mode) and its state.

With PROMETHEUS_MULTIPROC_DIR set (docker-compose sets it; gunicorn's child_exit hook in
evergreen_site/gunicorn.py marks exited workers), every worker writes its values to a file there
and a scrape of any worker sums them all; without it (make run) the one process reports itself.
"""

from __future__ import annotations

import os

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from knowledge.telemetry.flusher import flusher
from knowledge.telemetry.state import StateCollector

MULTIPROC_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


def metrics_text() -> tuple[bytes, str]:
    """(body, content type) of one scrape; this process's tallies are flushed first."""
    flusher.flush_now()
    if os.environ.get(MULTIPROC_VARIABLE):
        instruments = CollectorRegistry()
        multiprocess.MultiProcessCollector(instruments)
    else:
        instruments = REGISTRY
    state = CollectorRegistry(auto_describe=False)
    state.register(StateCollector())
    return generate_latest(instruments) + generate_latest(state), CONTENT_TYPE_LATEST

"""The test process runs no telemetry thread: tests flush by hand, so nothing writes behind their back."""

from __future__ import annotations

import threading

import evergreen_site.wsgi  # noqa: F401  # the WSGI application installs the embedded reconciler on import
from knowledge.services.build_queue import embedded_reconciler_install
from knowledge.telemetry.flusher import flusher


def test_importing_the_wsgi_application_starts_no_telemetry_thread_under_pytest() -> None:
    embedded_reconciler_install()  # as a second import of the application would

    assert flusher.paused
    assert "evergreen-telemetry" not in {thread.name for thread in threading.enumerate()}

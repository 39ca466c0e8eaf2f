"""A process's own background thread: a forked child (a gunicorn worker) starts its own."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

Held = tuple[int, threading.Thread] | None  # the thread and the process that started it


def process_thread(held: Held, target: Callable[[], None], *, name: str) -> tuple[int, threading.Thread]:
    """`held` if it is alive in this process, else a new daemon thread running `target`, started."""
    if held is not None and held[0] == os.getpid() and held[1].is_alive():
        return held
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return os.getpid(), thread

"""A real HTTP server on loopback that receives webhook notices and answers with scripted statuses."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int]  # answered in turn; the last one repeats
    received: list[Received] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    def next_status(self) -> int:
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]


@contextmanager
def receiver(*statuses: int) -> Iterator[Receiver]:
    """Serve on 127.0.0.1 with a free port in a thread; answer each POST with the next status (200 when none)."""
    state = Receiver(url="", statuses=list(statuses) or [200])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(state.next_status())
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            state.arrived.set()

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/evergreen"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()

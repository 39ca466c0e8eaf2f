"""The floor the HTTP benchmark measures Evergreen against: a WSGI app replaying Evergreen's answers.

For each recorded request (path with query string, If-None-Match) it returns the status, headers and
body Evergreen returned for it, byte for byte, and does nothing else: no routing, middleware,
database, cache or serialization, one dict lookup. bench.http records the answers from a running
Evergreen and serves this app under the same gunicorn configuration:

    BENCH_RECORDING=answers.json gunicorn 'bench.baseline_app:create_app()'
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

RECORDING_ENV = "BENCH_RECORDING"
# Headers the server adds to every answer itself (gunicorn, for both apps): never replayed.
SERVER_HEADERS = frozenset({"server", "date", "connection", "transfer-encoding", "keep-alive"})

Answer = tuple[str, list[tuple[str, str]], bytes]
StartResponse = Callable[..., Any]
NOT_RECORDED: Answer = ("404 Not Found", [("Content-Length", "0")], b"")


def request_key(target: str, if_none_match: str | None) -> tuple[str, str]:
    return target, if_none_match or ""


def load_answers(path: Path) -> dict[tuple[str, str], Answer]:
    """The recording bench.http wrote: a JSON list of {target, if_none_match, status, headers, body}."""
    answers: dict[tuple[str, str], Answer] = {}
    for item in json.loads(path.read_text(encoding="utf-8")):
        headers = [(name, value) for name, value in item["headers"] if name.lower() not in SERVER_HEADERS]
        body = base64.b64decode(item["body"])
        answers[request_key(item["target"], item["if_none_match"])] = (item["status"], headers, body)
    return answers


def create_app(recording: str | None = None) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """The WSGI callable; gunicorn calls this factory once per worker."""
    answers = load_answers(Path(recording or os.environ[RECORDING_ENV]))

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        target = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        if query:
            target = f"{target}?{query}"
        status, headers, body = answers.get(request_key(target, environ.get("HTTP_IF_NONE_MATCH")), NOT_RECORDED)
        start_response(status, headers)
        return [body]

    return app

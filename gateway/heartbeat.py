"""A long answer keeps its gunicorn worker alive for as long as the client keeps reading it.

A sync worker tells the arbiter it is alive only between requests; one answer taking longer than
`--timeout` (a 100 MB context.json read at 2 MB/s) got the worker killed half-way. gunicorn's
post_fork hook (evergreen_site/gunicorn.py) installs the worker's own notify here, and a streamed
answer calls it after each slice the client has taken: the timeout now bounds a stall, not a download.
Behind nginx (deploy/nginx/nginx.conf buffers answers) gunicorn writes at memory speed anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator


def _nothing() -> None:
    return None


_beats: list[Callable[[], None]] = [_nothing]  # the one installed: the worker's notify under gunicorn


def heartbeat_install(beat: Callable[[], None]) -> None:
    """Called once in each worker process, after the fork."""
    _beats[0] = beat


def beating(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """`chunks`, telling the worker's arbiter it is alive after each one has been sent."""
    for chunk in chunks:
        yield chunk
        _beats[0]()

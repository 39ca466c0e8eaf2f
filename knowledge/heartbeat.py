"""A long request keeps its gunicorn worker alive for as long as it makes progress.

A sync worker tells the arbiter it is alive only between requests; one request taking longer than
`--timeout` got the worker killed half-way: a 100 MB context.json read at 2 MB/s, or the first load
of a 100,000-entry release. gunicorn's post_fork hook (evergreen_site/gunicorn.py) installs the
worker's own notify here; a streamed answer calls it after each slice the client has taken, and a
request waiting for a release to load calls it while the load runs: the timeout now bounds a stall,
not a download or a load. Behind nginx (deploy/nginx/nginx.conf buffers answers) gunicorn writes at
memory speed anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator


def _nothing() -> None:
    return None


_beats: list[Callable[[], None]] = [_nothing]  # the one installed: the worker's notify under gunicorn


def heartbeat_install(beat: Callable[[], None]) -> None:
    """Called once in each worker process, after the fork."""
    _beats[0] = beat


def heartbeat() -> None:
    """Tell the arbiter this worker is alive (nothing outside gunicorn)."""
    _beats[0]()


def beating(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """`chunks`, telling the worker's arbiter it is alive after each one has been sent."""
    for chunk in chunks:
        yield chunk
        _beats[0]()

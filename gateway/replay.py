"""A WSGI layer in front of Django that replays the answers agents repeat, and their 304s.

Agents ask the same questions again and revalidate with If-None-Match. Django's request handling
(request object, URL resolution, middleware) costs about twice what Evergreen's own view does, so a
read view marks each 200 GET answer of a public namespace as replayable; this layer remembers it
per process, keyed by everything that selects it (scheme, host, path, query string, Accept), and
answers a repeat — a 200, a HEAD or a 304 — without entering Django, as long as:

- the request carries no Authorization and no cookie (keys and the admin always go through Django);
- the namespace the request addresses still serves the same release, read through the same
  namespace cache the gate uses (a publish is visible within about a second either way, and while
  PostgreSQL fails the cache's last answer holds, as it does in Django); during a switch the
  previous release serves until the new one has loaded in the background, here as in Django;
- the namespace's rate limit admits the client (the same shared limiter; over it, Django answers 429).

A miss of /api/context on a route Django has answered before is answered here too, with the headers
Django gave that route (gateway.fastmiss), and so is a POST to a route whose view taught it how
(gateway.fastpost: MCP `search_context`). Everything else — other misses, writes, errors, private
namespaces — goes to Django unchanged.
"""

from __future__ import annotations

import io
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.utils.http import parse_etags

from gateway import outages
from gateway.clients import client_address_of
from gateway.fastmiss import (
    CONTEXT_ROUTE,
    ContextShape,
    ContextShapes,
    fast_context,
    fast_eligible,
    remembered_replayable,
    shape_key,
    shapes,
)
from gateway.fastpost import FastRoute, declared_body, post_key, posts
from gateway.ratelimit import RateDecision, rate_for, rate_limit_hit
from gateway.telemetry import access_log, channel_of
from knowledge.requestlog.buffer import request_observed
from knowledge.requestlog.records import Observed
from knowledge.selectors.serving import NamespaceState, release_served
from knowledge.telemetry import ids
from knowledge.telemetry.metrics import tallies

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

REPLAY_ENTRIES = 4096
REPLAY_BYTES = 64 * 1024 * 1024
# Per-request headers: the rate-limit state, the request ID and the degraded mark are made anew for every answer.
PER_REQUEST_HEADERS = frozenset({"ratelimit", "ratelimit-policy", ids.HEADER.lower(), outages.HEADER.lower()})
NOT_MODIFIED_DROPS = frozenset({"content-type"})


@dataclass(frozen=True, slots=True)
class Replayable:
    """What a read view attaches to a replayable answer: how to re-check that it still holds."""

    state: Callable[[], NamespaceState | None]  # the namespace as this request addressed it
    release_key: str
    route: str = "unnamed"  # the URL name, for metrics and logs
    observed: Observed | None = None  # what the request log records for each repeat

    def with_observed(self, observed: Observed | None) -> Replayable:
        """The same answer with another request-log record (dataclasses.replace, without its field scan)."""
        return Replayable(self.state, self.release_key, self.route, observed)


@dataclass(frozen=True, slots=True)
class Remembered:
    replayable: Replayable
    headers: tuple[tuple[str, str], ...]  # as Django sent them, without the per-request rate headers
    body: bytes
    etag: str


@dataclass(frozen=True, slots=True)
class Replayed:
    """An answer given from memory: its status and body, and the namespace and client it was given to."""

    status: int
    body: Iterable[bytes]
    state: NamespaceState
    client: str


def replay_key(environ: dict[str, Any]) -> tuple[str, ...] | None:
    """What selects an answer; None when the request must go to Django."""
    if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
        return None
    if "HTTP_AUTHORIZATION" in environ or "HTTP_COOKIE" in environ or "HTTP_RANGE" in environ:
        return None  # keys, the admin and byte ranges (gateway.ranges) always go through Django
    return (
        environ.get("wsgi.url_scheme", "http"),
        environ.get("HTTP_X_FORWARDED_PROTO", ""),
        environ.get("HTTP_HOST", ""),
        environ.get("PATH_INFO", ""),
        environ.get("QUERY_STRING", ""),
        environ.get("HTTP_ACCEPT", ""),
    )


def _still_served(state: NamespaceState, release_key: str) -> bool:
    """Whether the release an answer came from is what the namespace serves in this process: the active
    one, or during a switch the previous one until the new one has loaded (asking starts that load)."""
    if state.release_key == release_key:
        return True
    if state.release_id is None:
        return False
    try:
        return release_served(state).key == release_key
    except DatabaseError:
        return False


def if_none_match(header: str, etag: str) -> bool:
    """RFC 9110 §13.1.2, weak comparison (the same rule as gateway.http.not_modified)."""
    if header == etag or header.strip() == "*":
        return True
    return etag.removeprefix("W/") in {tag.removeprefix("W/") for tag in parse_etags(header)}


class ReplayMemory:
    """A bounded LRU of remembered answers (entries and bytes), safe across threads."""

    def __init__(self, *, entries: int = REPLAY_ENTRIES, size: int = REPLAY_BYTES) -> None:
        self._items: OrderedDict[tuple[str, ...], Remembered] = OrderedDict()
        self._bytes = 0
        self._entries = entries
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> Remembered | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, ...], remembered: Remembered) -> None:
        if len(remembered.body) > self._size // 16:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)
            self._items[key] = remembered
            self._bytes += len(remembered.body)
            while len(self._items) > self._entries or self._bytes > self._size:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= len(dropped.body)

    def forget(self, key: tuple[str, ...]) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


memory = ReplayMemory()


class ReplayApp:
    """Wraps Django's WSGI application (evergreen_site.wsgi)."""

    def __init__(
        self,
        app: WsgiApp,
        *,
        remembered: ReplayMemory = memory,
        learnt: ContextShapes = shapes,
        learnt_posts: ContextShapes = posts,
    ) -> None:
        self.app = app
        self.memory = remembered
        self.shapes = learnt
        self.posts = learnt_posts

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        request_id = ids.request_id_accept(environ.get(ids.ENVIRON_KEY))
        key = replay_key(environ)
        if key is not None:
            found = self.memory.get(key)
            if found is not None:
                answer = self._replay(environ, start_response, key, found, request_id)
                if answer is not None:
                    replayable = found.replayable
                    self._observe(environ, replayable.route, replayable.observed, answer, request_id, started)
                    return answer.body
            elif fast_eligible(key[3], key[4]) and (shape := self.shapes.get(shape_key(key))) is not None:
                fast = self._fast(environ, start_response, key, shape, request_id)
                if fast is not None:
                    remembered, sent = fast
                    replayable = remembered.replayable
                    self._observe(
                        environ, replayable.route, replayable.observed, sent, request_id, started, memory=False
                    )
                    return sent.body
        elif (posted := post_key(environ)) is not None and (shape := self.posts.get(posted)) is not None:
            posted_answer = self._fast_post(environ, start_response, shape, request_id)
            if posted_answer is not None:
                route = shape.replayable.route
                self._observe(environ, route, None, posted_answer, request_id, started, memory=False)
                return posted_answer.body
        environ[ids.ENVIRON_KEY] = request_id  # Django's TelemetryMiddleware answers and logs with it
        return self._through_django(environ, start_response, key)

    def _observe(
        self,
        environ: dict[str, Any],
        route: str,
        observed: Observed | None,
        answer: Replayed,
        request_id: str,
        started: float,
        *,
        memory: bool = True,
    ) -> None:
        """Count and log an answer given without Django, as Django's path does (metrics, request log, access log).

        `memory`: replayed from memory (True), or computed in front of Django (gateway.fastmiss, gateway.fastpost).
        `observed`: the request-log record, when the answer's own work did not write it.
        """
        seconds = time.perf_counter() - started
        tallies.request(route, channel_of(route), answer.status, seconds, from_memory=memory)
        if observed is not None:
            request_observed(
                observed,
                enabled=answer.state.log_requests,
                latency_seconds=seconds,
                client=answer.client,
                request_id=request_id,
            )
        if settings.EVERGREEN.access_log:
            access_log(
                request_id=request_id,
                method=environ["REQUEST_METHOD"],
                path=environ.get("PATH_INFO", ""),
                status=answer.status,
                route=route,
                seconds=seconds,
                client=answer.client,
                memory=memory,
            )

    def _replay(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        key: tuple[str, ...],
        found: Remembered,
        request_id: str,
    ) -> Replayed | None:
        try:
            state = found.replayable.state()
        except DatabaseError:
            return None  # a namespace too stale to trust: Django answers (503)
        if state is None or not state.is_public or not _still_served(state, found.replayable.release_key):
            self.memory.forget(key)
            return None
        client = client_address_of(environ)
        decision = rate_limit_hit(scope=state.slug, client=client, rate=rate_for(state.rate_limit))
        if decision is not None and not decision.admitted:
            return None  # Django answers the 429 with every header
        return self._send(environ, start_response, found, request_id, decision, state, client)

    def _fast(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        key: tuple[str, ...],
        shape: ContextShape,
        request_id: str,
    ) -> tuple[Remembered, Replayed] | None:
        """A /api/context miss answered with the route's shape (gateway.fastmiss), remembered for its repeats."""
        fast = fast_context(environ, shape)
        if fast is None:
            return None
        kept = tuple(fast.headers)  # a shape's headers are a remembered answer's: no per-request ones
        replayable = remembered_replayable(shape, fast.observed)
        remembered = Remembered(replayable, kept, fast.answer.body, fast.answer.etag)
        if environ["REQUEST_METHOD"] == "GET":
            self.memory.put(key, remembered)
        sent = self._send(environ, start_response, remembered, request_id, fast.rate, fast.state, fast.client)
        return remembered, sent

    def _fast_post(
        self, environ: dict[str, Any], start_response: StartResponse, shape: ContextShape, request_id: str
    ) -> Replayed | None:
        """A POST answered by its route (gateway.fastpost) with the route's shape, or None (Django answers it,
        the body as read given back)."""
        route: FastRoute = shape.replayable
        body = declared_body(environ, route.body_limit())
        if body is None:
            return None
        token = ids.current.set(request_id)  # what the route's request log records, as Django's middleware sets it
        try:
            posted = route.answer(environ, body)
        finally:
            ids.current.reset(token)
        if posted is None:
            environ["wsgi.input"] = io.BytesIO(body)
            return None
        headers = [*shape.answer_headers(posted.body), (ids.HEADER, request_id), *outages.degraded_headers().items()]
        if posted.rate is not None:
            headers += posted.rate.headers().items()
        start_response("200 OK", headers)
        return Replayed(200, [posted.body], posted.state, posted.client)

    def _send(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        found: Remembered,
        request_id: str,
        decision: RateDecision | None,
        state: NamespaceState,
        client: str,
    ) -> Replayed:
        """Answer with a remembered answer's headers and this request's: a 200, a HEAD or a 304."""
        headers = [*found.headers, (ids.HEADER, request_id), *outages.degraded_headers().items()]
        if decision is not None:
            headers += decision.headers().items()
        conditional = environ.get("HTTP_IF_NONE_MATCH")
        if conditional and if_none_match(conditional, found.etag):
            # As Django's HttpResponseNotModified: no Content-Type, an empty body.
            start_response(
                "304 Not Modified",
                [
                    (name, "0" if name.lower() == "content-length" else value)
                    for name, value in headers
                    if name.lower() not in NOT_MODIFIED_DROPS
                ],
            )
            return Replayed(304, [], state, client)
        start_response("200 OK", headers)
        return Replayed(200, [] if environ["REQUEST_METHOD"] == "HEAD" else [found.body], state, client)

    def _through_django(
        self, environ: dict[str, Any], start_response: StartResponse, key: tuple[str, ...] | None
    ) -> Iterable[bytes]:
        seen: list[Any] = []

        def capture(status: str, headers: list[tuple[str, str]], *args: Any) -> Any:
            seen.append((status, headers))
            return start_response(status, headers, *args)

        response = self.app(environ, capture)
        replayable = getattr(response, "evergreen_replayable", None)
        if key is not None and replayable is not None and environ["REQUEST_METHOD"] == "GET" and seen:
            self._remember(key, replayable, seen[0], response)
        route = getattr(response, "evergreen_fast_post", None)
        if route is not None and seen and (posted := post_key(environ)) is not None:
            self._learn_post(posted, route, seen[0], response)
        return response

    def _learn_post(self, key: tuple[str, ...], route: FastRoute, sent: Any, response: Any) -> None:
        """A POST route's shape: Django's headers of a 200 answer, less the per-request ones."""
        status, headers = sent
        names = {name.lower() for name, _ in headers}
        if not status.startswith("200") or "set-cookie" in names or getattr(response, "streaming", False):
            return
        kept = tuple((name, value) for name, value in headers if name.lower() not in PER_REQUEST_HEADERS)
        self.posts.learn(key, route, kept)

    def _remember(self, key: tuple[str, ...], replayable: Replayable, sent: Any, response: Any) -> None:
        status, headers = sent
        names = {name.lower() for name, _ in headers}
        vary = ",".join(value for name, value in headers if name.lower() == "vary").lower()
        if not status.startswith("200") or "set-cookie" in names or "cookie" in vary:
            return
        if getattr(response, "streaming", False):
            return
        etag = next((value for name, value in headers if name.lower() == "etag"), None)
        if etag is None:
            return
        kept = tuple((name, value) for name, value in headers if name.lower() not in PER_REQUEST_HEADERS)
        self.memory.put(key, Remembered(replayable, kept, bytes(response.content), etag))
        if replayable.route == CONTEXT_ROUTE and fast_eligible(key[3], key[4]):
            self.shapes.learn(shape_key(key), replayable, kept)

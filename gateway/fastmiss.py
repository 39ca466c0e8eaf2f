"""/api/context cache misses answered in front of Django, with the headers Django gave the same route.

A miss used to go through Django: the request object, URL resolution, eleven middleware and the
read-view decorator cost more CPU than ranking and packing the answer. Yet for one route, host,
scheme and Accept, everything Django adds to a public /api/context answer is the same from one
topic to the next, except the answer's ETag and length and the per-request headers. So when Django
answers such a request, the replay layer keeps its headers as the route's *shape*; the next request
for another topic on the same route is answered here with the same work the view does (the same
namespace state, rate limit, release, parameter parsing and pack cache), and the shape's headers.

A shape is only used while the namespace serves the release it was learnt with (its headers name
that release; during a switch, the previous release serves until the new one has loaded) and stays
public. Everything else goes to Django, which answers exactly as before: anything the view would
refuse (a bad parameter, over the rate limit), `?release=` pins, `?explain=`/`why=`, namespaces
that fail to load, and every route but /api/context.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError

from gateway.clients import client_address_of
from gateway.context import ContextAnswer, context_answer, context_observed
from gateway.errors import GatewayError
from gateway.params import context_query_from_bytes
from gateway.ratelimit import RateDecision, rate_for, rate_limit_hit
from knowledge.requestlog.records import Observed
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.selectors.serving import NamespaceState, release_served

CONTEXT_ROUTE = "api-context"
SHAPES_MAX = 256
# Answered by Django only: pinned releases and explanations are other views of the route.
DJANGO_ONLY_PARAMETERS = ("release=", "explain=", "why=")
PER_ANSWER = frozenset({"etag", "content-length"})

ShapeKey = tuple[str, ...]


def shape_key(replay_key: tuple[str, ...]) -> ShapeKey:
    """The replay key without its query string: scheme, forwarded proto, host, path, Accept."""
    scheme, proto, host, path, _query, accept = replay_key
    return scheme, proto, host, path, accept


def fast_eligible(path: str, query: str) -> bool:
    return path.endswith("/api/context") and not any(marker in query for marker in DJANGO_ONLY_PARAMETERS)


@dataclass(frozen=True, slots=True)
class ContextShape:
    """Django's answer headers for one /api/context route, less the per-answer and per-request ones."""

    # gateway.replay.Replayable (imported there; it imports this module), or a POST's gateway.fastpost.FastRoute
    replayable: Any
    headers: tuple[tuple[str, str], ...]  # in Django's order; ETag and Content-Length hold placeholders
    etag_at: tuple[int, ...]  # where in `headers` the ETag is
    length_at: tuple[int, ...]  # and the Content-Length

    @classmethod
    def of(cls, replayable: Any, headers: Sequence[tuple[str, str]]) -> ContextShape:
        names = [name.lower() for name, _ in headers]
        etags = tuple(i for i, name in enumerate(names) if name == "etag")
        lengths = tuple(i for i, name in enumerate(names) if name == "content-length")
        return cls(replayable, tuple(headers), etags, lengths)

    def answer_headers(self, body: bytes, etag: str = "") -> list[tuple[str, str]]:
        headers = list(self.headers)
        for at in self.etag_at:
            headers[at] = (headers[at][0], etag)
        length = str(len(body))
        for at in self.length_at:
            headers[at] = (headers[at][0], length)
        return headers


class ContextShapes:
    """The shapes this process has learnt, a bounded LRU (hosts and paths come from clients).

    `required`: the headers an answer must have to be a shape (those substituted per answer)."""

    def __init__(self, size: int = SHAPES_MAX, *, required: frozenset[str] = PER_ANSWER) -> None:
        self._items: OrderedDict[ShapeKey, ContextShape] = OrderedDict()
        self._size = size
        self._required = required
        self._lock = threading.Lock()

    def learn(self, key: ShapeKey, replayable: Any, headers: Sequence[tuple[str, str]]) -> None:
        names = {name.lower() for name, _ in headers}
        if not names >= self._required:
            return
        shape = ContextShape.of(replayable, headers)
        with self._lock:
            self._items[key] = shape
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def get(self, key: ShapeKey) -> ContextShape | None:
        with self._lock:
            return self._items.get(key)

    def forget(self, key: ShapeKey) -> None:
        with self._lock:
            self._items.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


@dataclass(frozen=True, slots=True)
class FastAnswer:
    """A miss answered here: what the replay layer sends, remembers and logs."""

    state: NamespaceState
    client: str
    answer: ContextAnswer
    headers: list[tuple[str, str]]  # the shape's, with this answer's ETag and length
    rate: RateDecision | None
    observed: Observed | None


def fast_context(environ: dict[str, Any], shape: ContextShape) -> FastAnswer | None:
    """The answer the context view would give, or None when Django must answer (see the module docstring)."""
    try:
        state = shape.replayable.state()
    except DatabaseError:
        return None
    if state is None or not state.is_public or state.release_id is None:
        return None
    raw = environ.get("QUERY_STRING", "").encode("latin-1")  # PEP 3333: the bytes as sent, as latin-1 text
    try:
        loaded = release_served(state)
        if loaded.key != shape.replayable.release_key:
            return None  # the shape's headers name another release
        release = loaded.cleared(PUBLIC)  # what the gate hands the view for a request without a key
        namespace = release.snapshot.namespace
        query = context_query_from_bytes(
            raw,
            categories=[category.slug for category in namespace.categories],
            default_budget=namespace.default_budget,
        )
    except (GatewayError, DatabaseError):
        return None  # Django answers the 400, or the 503
    client = client_address_of(environ)
    decision = rate_limit_hit(scope=state.slug, client=client, rate=rate_for(state.rate_limit))
    if decision is not None and not decision.admitted:
        return None  # Django answers the 429 (a refused request is not counted twice)
    answer = context_answer(release, query)
    observed = context_observed(release, query, answer, channel="rest")
    return FastAnswer(state, client, answer, shape.answer_headers(answer.body, answer.etag), decision, observed)


def remembered_replayable(shape: ContextShape, observed: Observed | None) -> Any:
    """The shape's Replayable for one answer: its own request-log record."""
    return shape.replayable.with_observed(observed)


shapes = ContextShapes()

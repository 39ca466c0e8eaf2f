"""POSTs answered in front of Django, with the headers Django gave the same route (as gateway.fastmiss does
for /api/context misses).

An MCP `search_context` call costs what the same /api/context miss costs plus Django's request handling
(request object, URL resolution, eleven middleware) and the MCP framing. A view whose POST answers can
be made without Django attaches a `FastRoute` to its 200 answer (`evergreen_fast_post`): what to re-check
and how to answer the next POST to the same route. The replay layer keeps Django's headers of that
answer as the route's shape (less the per-request ones) and answers later POSTs to the same scheme,
forwarded proto and host and path with the route's own work and the shape's headers, the length
substituted. A route declines (None) whatever it would not answer exactly as Django does — another
method or tool, a body it cannot read, a namespace that changed, a client over its limit — and that
request goes to Django unchanged, its body as read.

Requests with credentials, cookies or an Origin (CORS answers carry their own headers) always go to Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gateway.fastmiss import ContextShapes
from gateway.ratelimit import RateDecision
from knowledge.selectors.serving import NamespaceState

POST_PER_ANSWER = frozenset({"content-length"})


class FastRoute(Protocol):
    """What a view attaches to an answer whose route the replay layer may answer itself."""

    route: str  # the URL name, for metrics and logs

    def body_limit(self) -> int: ...

    def answer(self, environ: dict[str, Any], body: bytes) -> PostAnswer | None:
        """The body Django would send with this route's headers, or None for Django to answer."""
        ...


@dataclass(frozen=True, slots=True)
class PostAnswer:
    body: bytes
    state: NamespaceState
    client: str
    rate: RateDecision | None


def post_key(environ: dict[str, Any]) -> tuple[str, ...] | None:
    """What selects a POST route's shape; None when the request must go to Django."""
    if environ.get("REQUEST_METHOD") != "POST":
        return None
    if "HTTP_AUTHORIZATION" in environ or "HTTP_COOKIE" in environ or "HTTP_ORIGIN" in environ:
        return None
    return (
        environ.get("wsgi.url_scheme", "http"),
        environ.get("HTTP_X_FORWARDED_PROTO", ""),
        environ.get("HTTP_HOST", ""),
        environ.get("HTTP_X_FORWARDED_HOST", ""),
        environ.get("PATH_INFO", ""),
    )


def declared_body(environ: dict[str, Any], limit: int) -> bytes | None:
    """The body by its Content-Length, when it declares one within `limit` (else Django reads it)."""
    try:
        declared = int(environ.get("CONTENT_LENGTH") or -1)
    except ValueError:
        return None
    if declared < 0 or declared > limit:
        return None
    body: bytes = environ["wsgi.input"].read(declared)
    return body


posts = ContextShapes(required=POST_PER_ANSWER)

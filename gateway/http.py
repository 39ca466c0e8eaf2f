"""The HTTP conventions of seed §10 on every response: charset, ETag, Cache-Control, 304, HEAD, nosniff, Link."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import cast

import orjson
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.http import parse_etags

from gateway.errors import GatewayError
from gateway.outages import degraded_headers
from gateway.ratelimit import RateDecision
from knowledge.heartbeat import beating
from knowledge.requestlog.records import Observed
from knowledge.retrieval.render.policy import CONTENT_USAGE
from knowledge.retrieval.render.release import etag_of

MAX_AGE = 900  # seed §10: Cache-Control: public, max-age=900
JSON = "application/json; charset=utf-8"
MARKDOWN = "text/markdown; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
HTML = "text/html; charset=utf-8"


# RFC 8631 relations on HTML pages, so an agent that lands on a page finds the machine interfaces: the MCP
# endpoint, its server card, the A2A agent card and the OpenAPI document (which is per deployment).
SERVICE_LINKS = (
    '<{prefix}/mcp>; rel="service"; title="MCP (Streamable HTTP)"',
    '<{prefix}/mcp/server-card>; rel="service-meta"; type="application/mcp-server-card+json"',
    '<{prefix}/.well-known/agent-card.json>; rel="service-meta"; type="application/json"; title="A2A agent card"',
    '</api/schema/>; rel="service-desc"; type="application/json"',
)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """public for public namespaces; private ones are never shared between keys (Vary: Authorization)."""

    public: bool = True
    max_age: int = MAX_AGE

    def header(self) -> str:
        return f"{'public' if self.public else 'private'}, max-age={self.max_age}"


@dataclass(slots=True)
class Reply:
    """What a read view produces; `finish` turns it into the response with every §10 header."""

    body: bytes
    content_type: str
    status: int = 200
    etag: str | None = None  # precomputed (artifacts, cached packs); else the hash of the body
    vary_accept: bool = False  # the URL also answers Markdown for Accept: text/markdown
    alternate: str | None = None  # path of the Markdown (or HTML) twin, for Link rel="alternate"
    alternate_type: str = "text/markdown"
    describedby: str | None = None  # path of llms.txt, for Link rel="describedby" (llms.txt discovery)
    services: str | None = None  # the namespace's path prefix: HTML pages link its MCP, A2A and OpenAPI documents
    headers: dict[str, str] = field(default_factory=dict)
    observed: Observed | None = None  # what the request log records (knowledge.requestlog)
    stream: Iterator[bytes] | None = None  # a large file's bytes, sent as they are read (then `body` is empty)
    length: int = 0  # the streamed bytes' length


def json_reply(document: object, *, status: int = 200) -> Reply:
    return Reply(orjson.dumps(document), JSON, status=status)


def error_reply(error: GatewayError) -> Reply:
    return Reply(orjson.dumps(error.body()), JSON, status=error.status)


def not_modified(request: HttpRequest, etag: str) -> bool:
    """If-None-Match (RFC 9110 §13.1.2): weak comparison, `*` matches any current representation."""
    header = request.META.get("HTTP_IF_NONE_MATCH")
    if not header:
        return False
    if header == etag or header.strip() == "*":
        return True
    wanted = {tag.removeprefix("W/") for tag in parse_etags(header)}
    return etag.removeprefix("W/") in wanted


def read_body(request: HttpRequest, limit: int) -> bytes | None:
    """The body, or None when it is over ``limit`` — by Content-Length before reading, else by reading one byte more."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        return None
    body = request.read(limit + 1)
    return None if len(body) > limit else body


def wants_markdown(request: HttpRequest) -> bool:
    """Accept: text/markdown on an HTML URL (and not outranked by text/html) asks for the mirror."""
    accept = request.headers.get("Accept", "")
    weights: dict[str, float] = {}
    for part in accept.split(","):
        media, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        weights[media.strip().lower()] = quality
    markdown = weights.get("text/markdown", 0.0)
    return markdown > 0 and markdown >= weights.get("text/html", 0.0)


def _links(reply: Reply) -> str | None:
    links = []
    if reply.alternate:
        links.append(f'<{reply.alternate}>; rel="alternate"; type="{reply.alternate_type}"')
    if reply.describedby:
        links.append(f'<{reply.describedby}>; rel="describedby"; type="text/markdown"')
    if reply.services is not None:
        links += [link.format(prefix=reply.services) for link in SERVICE_LINKS]
    return ", ".join(links) or None


def finish(
    request: HttpRequest,
    reply: Reply,
    *,
    cache: CachePolicy,
    rate: RateDecision | None = None,
    vary: tuple[str, ...] = (),
    extra: Mapping[str, str] | None = None,
) -> HttpResponse:
    """Apply seed §10 to a reply: 304 on a matching If-None-Match (2xx only), HEAD without a body."""
    etag = reply.etag or etag_of(reply.body)
    headers: dict[str, str] = {
        "ETag": etag,
        "Cache-Control": "no-store" if reply.status == 429 else cache.header(),
        "X-Content-Type-Options": "nosniff",
        "Content-Usage": CONTENT_USAGE,
    }
    varies = list(vary)
    if not cache.public and "Authorization" not in varies:
        varies.append("Authorization")
    if reply.vary_accept:
        varies.append("Accept")
    if varies:
        headers["Vary"] = ", ".join(varies)
    link = _links(reply)
    if link:
        headers["Link"] = link
    if rate is not None:
        headers.update(rate.headers())
    headers.update(degraded_headers())
    headers.update(reply.headers)
    if extra:
        headers.update(extra)

    if 200 <= reply.status < 300 and not_modified(request, etag):
        response: HttpResponseBase = HttpResponseNotModified()
        for name, value in headers.items():
            response[name] = value
        return cast(HttpResponse, response)
    if reply.stream is not None:
        response = StreamingHttpResponse(beating(reply.stream), status=reply.status)
        length = reply.length
    else:
        response = HttpResponse(b"" if request.method == "HEAD" else reply.body, status=reply.status)
        length = len(reply.body)
    response["Content-Type"] = reply.content_type
    response["Content-Length"] = str(length)
    for name, value in headers.items():
        response[name] = value
    # A streamed file is a StreamingHttpResponse: callers only set headers and hand it to Django, which
    # serves both kinds, so the views keep their HttpResponse signatures.
    return cast(HttpResponse, response)

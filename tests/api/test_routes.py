"""Seed §10 on every route: charset, ETag, Cache-Control, 304, HEAD, nosniff, Link, Content-Usage, Accept."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

pytestmark = pytest.mark.django_db

ROUTES = [
    "",
    "index.html",
    "index.html.md",
    "llms.txt",
    "llms-full.txt",
    "context.json",
    "metrics.json",
    "api/metrics",
    "ai-policy.json",
    "ai.txt",
    "robots.txt",
    "sitemap.xml",
    "schemas/knowledge.schema.json",
    "api/context?topic=token%20%E9%A2%84%E7%AE%97",
    "api/entries/EG-202",
    "api/entries/EG-202.md",
    "entries/EG-202",
    "entries/EG-202.md",
    "docs/protocol-stack",
    "docs/protocol-stack.md",
    "api/prompt-pack?scenario=coding",
    "entries/",
    "entries/?q=token&page=1",
    "metrics.html",
]
HTML_ROUTES = ["", "index.html", "entries/EG-202", "docs/protocol-stack"]
PREFIXES = ["/", "/t/evergreen/"]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("route", ROUTES)
def test_every_route_has_the_seed_headers_304_and_head(client: Any, demo: Any, prefix: str, route: str) -> None:
    url = prefix + route
    response = client.get(url)

    assert response.status_code == 200, url
    assert "charset=utf-8" in response["Content-Type"]
    assert response["ETag"] == '"' + hashlib.sha256(response.content).hexdigest()[:32] + '"'
    assert response["Cache-Control"] == "public, max-age=900"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Usage"] == "train-ai=n, search=y"
    assert response["Content-Length"] == str(len(response.content))

    cached = client.get(url, headers={"If-None-Match": response["ETag"]})
    assert cached.status_code == 304
    assert cached.content == b""
    for header in ("ETag", "Cache-Control", "Vary"):
        assert cached.get(header) == response.get(header)

    head = client.head(url)
    assert head.status_code == 200
    assert head.content == b""
    for header in ("Content-Length", "ETag", "Content-Type", "Cache-Control"):
        assert head[header] == response[header]


@pytest.mark.parametrize("route", HTML_ROUTES)
def test_html_pages_link_their_markdown_twin_and_llms_txt(client: Any, demo: Any, route: str) -> None:
    response = client.get("/t/evergreen/" + route)
    twin = {"": "index.html.md", "index.html": "index.html.md"}.get(route, route + ".md")

    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert f'</t/evergreen/{twin}>; rel="alternate"; type="text/markdown"' in response["Link"]
    assert '</t/evergreen/llms.txt>; rel="describedby"' in response["Link"]
    assert response["Vary"] == "Accept"


@pytest.mark.parametrize("route", HTML_ROUTES)
def test_accept_markdown_on_an_html_url_returns_the_markdown(client: Any, demo: Any, route: str) -> None:
    html = client.get("/" + route)
    markdown = client.get("/" + route, headers={"Accept": "text/markdown"})
    twin = {"": "index.html.md", "index.html": "index.html.md"}.get(route, route + ".md")

    assert markdown["Content-Type"] == "text/markdown; charset=utf-8"
    assert markdown.content == client.get("/" + twin).content
    assert markdown["Vary"] == html["Vary"] == "Accept"
    assert markdown["ETag"] != html["ETag"]
    assert (
        client.get("/" + route, headers={"If-None-Match": html["ETag"], "Accept": "text/markdown"}).status_code == 200
    )


def test_the_index_page_links_llms_txt_in_the_head_and_in_the_header(client: Any, demo: Any) -> None:
    response = client.get("/")

    assert response["Link"].startswith(
        '</index.html.md>; rel="alternate"; type="text/markdown", </llms.txt>; rel="describedby"; type="text/markdown"'
    )
    assert b'<link rel="alternate" type="text/markdown" href="index.html.md">' in response.content


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
def test_other_methods_get_405_with_the_same_headers(client: Any, demo: Any, method: str) -> None:
    response = getattr(client, method)("/api/context")

    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["ETag"]


def test_errors_carry_the_headers_too(client: Any, demo: Any) -> None:
    for url in ("/api/entries/EG-999", "/api/context?budget=x", "/docs/nope", "/t/nope/llms.txt"):
        response = client.get(url)
        assert response.status_code in {400, 404}
        assert response["Content-Type"] == "application/json; charset=utf-8"
        assert response["ETag"] == '"' + hashlib.sha256(response.content).hexdigest()[:32] + '"'
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Cache-Control"].endswith("max-age=900")
        head = client.head(url)
        assert (head.status_code, head.content, head["Content-Length"]) == (
            response.status_code,
            b"",
            response["Content-Length"],
        )

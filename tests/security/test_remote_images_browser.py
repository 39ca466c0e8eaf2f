"""Issue 9 in Chromium: a remote image in an entry is fetched neither by the public page nor by the reviewer's
preview, and the Content-Security-Policy blocks any that would be; pages and the admin run without violations."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.services.entries import entry_create
from tests.browser import chromium_page
from tests.factories import content
from tests.servingfixtures import alpha, clean_serving_state, no_rate_limit, publish

__all__ = ["alpha", "clean_serving_state", "no_rate_limit"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct horse battery staple"
PIXEL = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")


class _Tracker(BaseHTTPRequestHandler):
    """The "remote host": it serves a pixel and remembers every path asked for."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/gif")
        self.send_header("Content-Length", str(len(PIXEL)))
        self.end_headers()
        self.wfile.write(PIXEL)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def tracker() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Tracker", (_Tracker,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page() -> Iterator[Any]:
    yield from chromium_page()


def tracking_body(remote: str) -> str:
    return (
        "The chart below.\n\n"
        f"![reader pixel]({remote}/markdown.gif?who=reader)\n\n"
        f'<img src="{remote}/raw.gif?who=reader" alt="raw">\n\n'
        "![inline](data:image/gif;base64,R0lGODlhAQABAAAAACw=)\n"
    )


def watch(page: Any) -> list[str]:
    """Console messages that report a Content-Security-Policy violation."""
    violations: list[str] = []
    page.on(
        "console",
        lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None,
    )
    return violations


def test_the_public_entry_page_fetches_no_remote_image(
    live_server: Any, page: Any, ns_a: Namespace, tracker: tuple[str, list[str]], no_rate_limit: None
) -> None:
    remote, seen = tracker
    publish(
        ns_a,
        [
            {
                "id": "AL-001",
                "category": "fact",
                "title": "A chart",
                "summary": "An entry with images.",
                "body": tracking_body(remote),
                "tags": ["chart"],
                "confidence": 0.9,
                "updated": "2026-08-01",
            }
        ],
        acknowledgement="the images are this test's subject",
    )
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    violations = watch(page)

    page.goto(f"{live_server.url}/t/alpha/entries/AL-001")
    page.wait_for_load_state("networkidle")

    assert page.get_attribute("a:text('reader pixel')", "href") == f"{remote}/markdown.gif?who=reader"
    assert [image.get_attribute("alt") for image in page.query_selector_all("img")] == ["raw"]
    assert page.get_attribute("img[alt=raw]", "src") is None
    assert seen == [] and not [url for url in requested if url.startswith(remote)]
    assert violations == []


def test_the_policy_blocks_a_remote_image_even_if_one_got_into_a_page(
    live_server: Any, page: Any, alpha: Namespace, tracker: tuple[str, list[str]], no_rate_limit: None
) -> None:
    remote, seen = tracker
    page.goto(f"{live_server.url}/t/alpha/")
    blocked = page.evaluate(
        """(url) => new Promise((resolve) => {
            document.addEventListener("securitypolicyviolation", (event) =>
                resolve([event.effectiveDirective, event.blockedURI]));
            const image = new Image();
            image.src = url;
            document.body.appendChild(image);
        })""",
        f"{remote}/injected.gif",
    )

    assert blocked == ["img-src", f"{remote}/injected.gif"]
    assert seen == []


def test_the_reviewers_preview_fetches_no_remote_image_and_the_admin_runs_under_the_policy(
    live_server: Any, page: Any, ns_a: Namespace, editor: Any, reviewer: Any, tracker: tuple[str, list[str]]
) -> None:
    remote, seen = tracker
    draft = entry_create(
        namespace=ns_a,
        category=ns_a.categories.get(slug="fact"),
        content=content(body=tracking_body(remote)),
        actor=editor,
    )
    violations = watch(page)

    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "rita")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
    page.goto(f"{live_server.url}/admin/knowledge/entryversion/{draft.pk}/change/")
    page.wait_for_selector(".evergreen-preview")
    page.wait_for_load_state("networkidle")

    assert (
        page.get_attribute(".evergreen-preview a:text('reader pixel')", "href") == f"{remote}/markdown.gif?who=reader"
    )
    assert seen == []
    for path in ("/admin/", "/admin/knowledge/entryversion/", "/admin/knowledge/entry/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    assert violations == []

"""The Playground in a real browser (Debian's Chromium via Playwright): a person types a topic and a budget and
sees the pack /api/context returns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.browser import chromium_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(no_rate_limit: None) -> Iterator[Any]:
    yield from chromium_page()


def ask(page: Any, base: str, topic: str, budget: int) -> list[str]:
    page.goto(base + "/")
    page.fill("#pg-topic", topic)
    page.fill("#pg-budget", str(budget))
    page.click("#pg-send")
    # A function, not an expression string: Playwright evaluates strings with eval, which the page's CSP forbids.
    page.wait_for_function("() => document.getElementById('pg-status').textContent.startsWith('matched=')")
    return [str(row.get_attribute("data-id")) for row in page.query_selector_all("#pg-entries tbody tr")]


def test_the_playground_shows_the_pack_the_api_returns(page: Any, live_server: Any, demo: Any) -> None:
    shown = ask(page, live_server.url, "token 预算", 2000)
    api = httpx.get(f"{live_server.url}/api/context", params={"topic": "token 预算", "budget": 2000}).json()

    assert shown == [e["id"] for e in api["entries"]]
    assert shown[0] == "EG-202"
    status = page.text_content("#pg-status")
    assert f"usedTokens={api['usedTokens']}/2000" in status
    assert f"truncated={'true' if api['truncated'] else 'false'}" in status
    assert (page.text_content("#pg-hint") or None) == api["hint"]
    assert '"source": "api/context"' in page.text_content("#pg-json")


def test_the_playground_shows_the_zero_hit_warning(page: Any, live_server: Any, demo: Any) -> None:
    shown = ask(page, live_server.url, "量子色动力学", 800)

    assert shown  # fallback entries are shown…
    assert "matched=false" in page.text_content("#pg-status")
    assert "兜底" in page.text_content("#pg-hint")  # …with the warning not to cite them


def test_the_playground_works_under_the_namespace_prefix(page: Any, live_server: Any, demo: Any) -> None:
    shown = ask(page, live_server.url + "/t/evergreen", "", 800)

    assert shown == sorted(shown)
    assert urlsplit(page.url).path == "/t/evergreen/"

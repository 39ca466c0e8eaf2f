"""The public pages in Chromium, at 1280 px and on a 390×844 phone: they fit, they pass axe, the Playground
links its results and keeps its question in the address."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from knowledge.models import Namespace
from tests.accessibility import assert_accessible
from tests.api.test_browse_pages import many_rows
from tests.browser import DESKTOP, PHONE, chromium_page, sideways_overflow
from tests.servingfixtures import publish

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PAGES = [
    "/",
    "/entries/",
    "/entries/?q=token",
    "/entries/EG-202",
    "/docs/protocol-stack",
    "/metrics.html",
    "/entries/EG-999",
]


@pytest.fixture(params=[DESKTOP, PHONE], ids=["desktop", "phone"])
def page(request: pytest.FixtureRequest, no_rate_limit: None) -> Iterator[Any]:
    yield from chromium_page(request.param)


def test_every_public_page_fits_the_window_and_passes_axe(page: Any, live_server: Any, demo: Namespace) -> None:
    for path in PAGES:
        page.goto(live_server.url + path)
        assert sideways_overflow(page) == 0, path
        assert_accessible(page)


def test_the_playground_links_its_results_and_keeps_the_question(page: Any, live_server: Any, demo: Namespace) -> None:
    base = live_server.url
    page.goto(base + "/")
    page.fill("#pg-topic", "token 预算")
    page.fill("#pg-budget", "2000")
    page.click("#pg-send")
    page.wait_for_function("() => document.getElementById('pg-status').textContent.startsWith('matched=')")
    api = httpx.get(f"{base}/api/context", params={"topic": "token 预算", "budget": 2000}).json()

    assert "topic=token+%E9%A2%84%E7%AE%97" in page.url and "budget=2000" in page.url
    assert page.get_attribute("#pg-meter", "value") == str(api["usedTokens"])
    assert page.get_attribute("#pg-meter", "max") == "2000"
    assert sideways_overflow(page) == 0
    assert_accessible(page)

    page.reload()  # the question in the address asks again
    page.wait_for_function("() => document.getElementById('pg-status').textContent.startsWith('matched=')")
    assert page.input_value("#pg-topic") == "token 预算"
    first = api["entries"][0]["id"]
    page.click(f"#pg-entries tbody tr[data-id='{first}'] a")
    page.wait_for_url(f"**/entries/{first}")
    assert first in page.text_content("h1")


def test_a_reader_searches_and_pages_a_large_namespace(page: Any, live_server: Any, ns_a: Namespace) -> None:
    publish(ns_a, many_rows(120))
    page.goto(f"{live_server.url}/t/alpha/")
    page.fill("#search-q", "glider")
    page.click("form.search button")
    page.wait_for_url("**/entries/?q=glider*")
    listed = page.eval_on_selector_all("table.entries td.id a", "links => links.map(a => a.textContent)")
    assert listed and all(int(i.split("-")[1]) % 5 == 0 for i in listed)

    page.goto(f"{live_server.url}/t/alpha/entries/")
    page.click("a[rel=next]")
    page.wait_for_url("**/entries/?page=2")
    assert page.text_content("table.entries td.id a") == "AL-051"
    assert sideways_overflow(page) == 0
    assert_accessible(page)

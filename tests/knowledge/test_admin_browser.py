"""The editorial cycle in a real browser: write, submit, review, approve, publish, and read it as an agent."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from knowledge.models import Namespace
from tests.browser import admin_log_in as log_in
from tests.browser import chromium_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[Any]:
    yield from chromium_page()


def test_editor_writes_reviewer_publishes_agent_reads(
    live_server: Any, page: Any, ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    base = live_server.url
    ns_a.base_url = f"{base}/t/alpha"
    ns_a.save()

    log_in(page, base, "edna")
    page.goto(f"{base}/admin/knowledge/entry/add/")
    page.select_option("#id_category", label="alpha/rule")
    page.fill("#id_title", "Cite every claim")
    page.fill("#id_summary", "Every factual sentence ends with the entry ID it rests on, like [AL-200].")
    page.fill("#id_body", "Put the marker right after the claim it supports. Never invent IDs.")
    page.fill("#id_tags", "citation, rules")
    page.fill("#id_confidence", "0.97")
    page.fill("#id_updated", "2026-11-01")
    page.click("input[name=_save]")
    page.wait_for_selector("text=AL-200 created as a draft")
    assert "Cite every claim" in page.content()
    page.click("button.evergreen-submit")
    page.wait_for_selector("text=submit done")

    log_in(page, base, "rita")
    page.goto(f"{base}/admin/knowledge/reviewitem/")
    page.click("text=Review (waiting")
    page.wait_for_selector("#changes")
    assert "(new entry)" in page.content()
    page.fill("textarea[name=note]", "Clear and short.")
    page.click("button.evergreen-approve")
    page.wait_for_selector("text=approve done")
    page.click("button.evergreen-publish")
    page.wait_for_selector("text=publish done")

    with urllib.request.urlopen(f"{base}/t/alpha/context.json") as response:  # our live server
        document = json.load(response)
    assert [entry["id"] for entry in document["entries"]] == ["AL-200"]
    assert document["entries"][0]["title"] == "Cite every claim"


def test_a_conflicting_save_keeps_the_typed_text(live_server: Any, page: Any, ns_a: Namespace, editor: Any) -> None:
    from knowledge.services.entries import entry_create
    from knowledge.services.versions import version_save
    from tests.factories import content

    draft = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)
    base = live_server.url
    log_in(page, base, "edna")
    page.goto(f"{base}/admin/knowledge/entryversion/{draft.pk}/change/")
    # Someone else saves the same draft meanwhile.
    version_save(version=draft, content=content(body="Their text."), expected_lock_version=0, actor=editor)
    page.fill("#id_body", "My careful text.")
    page.click("input[name=_save]")
    page.wait_for_selector("text=Someone else saved this draft")
    assert page.input_value("#id_body") == "My careful text."
    page.click("input[name=_save]")  # the second save, after reading the warning, goes through
    page.wait_for_selector("text=was changed successfully")
    draft.refresh_from_db()
    assert draft.body == "My careful text."

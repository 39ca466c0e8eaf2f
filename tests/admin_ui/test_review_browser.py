"""The review page in Chromium at 1280 px: both sides of the diff in view, buttons that save, no axe violation."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import EntryVersion, VersionState
from tests.accessibility import assert_accessible
from tests.browser import admin_log_in as log_in
from tests.browser import sideways_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def inside_window(page: Any, selector: str) -> list[str]:
    """The texts of the elements matching `selector` whose box reaches past the window's right edge."""
    return page.evaluate(
        """selector => [...document.querySelectorAll(selector)]
            .filter(el => el.getBoundingClientRect().right > window.innerWidth + 0.5)
            .map(el => el.textContent)""",
        selector,
    )


def test_the_reviewer_reads_both_sides_of_the_diff_at_1280(
    live_server: Any, page: Any, reviewer: Any, revision: EntryVersion
) -> None:
    base = live_server.url
    log_in(page, base, "rita")
    page.goto(f"{base}/admin/knowledge/entryversion/{revision.pk}/change/")
    page.wait_for_selector(".eg-diff-unified")
    assert page.is_visible("text=A second paragraph, new in v2.")
    assert page.is_visible(".eg-diff-unified ins >> text=double")
    assert not page.is_visible(".eg-diff-split")
    assert_accessible(page)

    page.click("text=side by side (split)")
    page.wait_for_selector(".eg-diff-split", state="visible")
    assert not page.is_visible(".eg-diff-unified")
    assert page.is_visible(".eg-diff-split del >> text=raise")
    assert page.is_visible(".eg-diff-split ins >> text=double")
    assert inside_window(page, ".eg-diff-split td, .eg-diff-split th") == []
    assert sideways_overflow(page) == 0
    assert page.query_selector("input[name=_save]") is None
    assert_accessible(page)

    page.fill("#eg-note", "Doubling is measured in the budget scan.")
    page.click("button.evergreen-approve")
    page.wait_for_selector("text=approve done")
    revision.refresh_from_db()
    assert revision.state == VersionState.APPROVED


def test_submit_for_review_keeps_the_edit_typed_just_before(
    live_server: Any, page: Any, editor: Any, live: EntryVersion
) -> None:
    base = live_server.url
    log_in(page, base, "edna")
    page.goto(f"{base}/admin/knowledge/entry/{live.entry_id}/change/")
    page.click("button.evergreen-edit")  # a POST: opens the draft
    page.wait_for_selector("#id_title")
    page.fill("#id_title", "Token budget discipline, retitled")
    assert_accessible(page)
    page.click("button.evergreen-submit")  # without pressing Save first
    page.wait_for_selector("text=saved, then submit done")
    draft = live.entry.versions.get(number=2)
    assert draft.state == VersionState.IN_REVIEW
    assert draft.title == "Token budget discipline, retitled"


def test_the_review_page_on_a_phone_fits_without_sideways_scrolling(
    live_server: Any, phone: Any, reviewer: Any, revision: EntryVersion
) -> None:
    log_in(phone, live_server.url, "rita")
    phone.goto(f"{live_server.url}/admin/knowledge/entryversion/{revision.pk}/change/")
    phone.click("text=side by side (split)")
    phone.wait_for_selector(".eg-diff-split", state="visible")
    assert inside_window(phone, ".eg-diff-split td") == []
    assert phone.is_visible(".eg-diff-split ins >> text=double")
    assert sideways_overflow(phone) == 0
    assert_accessible(phone)

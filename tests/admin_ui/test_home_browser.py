"""The admin home and the live preview in Chromium, at 1280 px and on a phone, checked by axe-core."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import EntryVersion, Feedback, Namespace
from knowledge.services.releases import release_build
from tests.accessibility import assert_accessible
from tests.browser import admin_log_in as log_in
from tests.browser import sideways_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_editor_types_a_new_entry_and_sees_its_cost_and_a_near_duplicate(
    live_server: Any, page: Any, ns_a: Namespace, editor: Any, live: EntryVersion
) -> None:
    release_build(namespace_id=ns_a.pk)
    base = live_server.url
    log_in(page, base, "edna")
    page.wait_for_selector("#my-drafts")
    assert_accessible(page)

    page.goto(f"{base}/admin/knowledge/entry/add/")
    page.select_option("#id_category", label="alpha/fact")
    page.fill("#id_title", "Token budget discipline")
    page.fill("#id_body", "Ask for **2000 tokens** by default.")
    page.wait_for_selector("#eg-live-preview strong")
    page.wait_for_selector("#eg-live-similar >> text=Near duplicate")
    assert page.inner_text("#eg-live-similar li") == f"{live.entry.public_id} {live.title} (near duplicate)"
    tokens = int(page.inner_text("#eg-live-tokens"))
    page.fill("#id_body", "Ask for **2000 tokens** by default. " * 20)
    page.wait_for_function(
        "before => Number(document.getElementById('eg-live-tokens').textContent) > before", arg=tokens
    )
    assert_accessible(page)


def test_the_reviewer_home_on_a_phone(live_server: Any, phone: Any, reviewer: Any, revision: EntryVersion) -> None:
    Feedback.objects.create(namespace=revision.entry.namespace, kind="outdated", message="The budget changed.")
    base = live_server.url
    log_in(phone, base, "rita")
    phone.wait_for_selector("#awaiting-review")
    assert phone.is_visible(f"#awaiting-review >> text={revision.entry.public_id} v2")
    assert phone.is_visible("#feedback >> text=The budget changed.")
    assert sideways_overflow(phone) == 0
    assert_accessible(phone)


def test_a_refusal_is_an_admin_page_that_says_why(live_server: Any, page: Any, editor: Any) -> None:
    log_in(page, live_server.url, "edna")
    response = page.goto(f"{live_server.url}/admin/knowledge/apikey/")
    assert response is not None and response.status == 403
    assert page.is_visible("#site-name >> text=Evergreen")  # inside the admin, with its navigation
    assert page.is_visible(".errornote >> text=Your roles do not allow this page or action.")
    assert_accessible(page)

"""The publish gate in Chromium: a reviewer reads what a draft would change, sees the held release's
golden questions before and after, and activates it with a reason."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from knowledge.models import Entry, GateStatus, GoldenQuestion, Namespace, Release
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from tests.accessibility import assert_accessible
from tests.browser import chromium_page
from tests.factories import content
from tests.knowledge.test_admin_browser import log_in
from tests.servingfixtures import alpha, clean_serving_state  # noqa: F401  # fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[Any]:
    yield from chromium_page()


def test_a_reviewer_sees_the_change_and_activates_the_held_release(
    live_server: Any,
    page: Any,
    alpha: Namespace,  # noqa: F811
    editor: Any,
    reviewer: Any,
) -> None:
    GoldenQuestion.objects.create(
        namespace=alpha, key="q-price", text="How much does alpha cost for agents?", relevant={"AL-002": 2}
    )
    serving = Namespace.objects.get(pk=alpha.pk).active_release
    entry = Entry.objects.get(namespace=alpha, public_id="AL-002")
    draft = version_draft_for_entry(entry=entry, actor=editor)
    harbour = content(title="Harbour opening hours", summary="The harbour opens at dawn.", body="Boats.", tags=[])
    version_save(version=draft, content=harbour, expected_lock_version=draft.lock_version, actor=editor)
    version_submit(version=draft, actor=editor)

    base = live_server.url
    log_in(page, base, "rita")
    page.goto(f"{base}/admin/knowledge/entryversion/{draft.pk}/change/")
    page.wait_for_selector("#evergreen-golden-preview")
    assert "Publishing it would hold the release" in page.content()
    assert page.locator("table.evergreen-gate tr.evergreen-regressed td").first.inner_text() == "q-price"
    assert_accessible(page)

    version_approve(version=draft, actor=reviewer)
    version_publish(version=draft, actor=reviewer)  # committed: the build runs (in-process) and holds it
    held = Release.objects.filter(namespace=alpha).order_by("-sequence")[0]
    assert held.gate.status == GateStatus.HELD
    assert Namespace.objects.get(pk=alpha.pk).active_release == serving

    page.goto(f"{base}/admin/knowledge/release/{held.pk}/change/")
    page.wait_for_selector("#evergreen-gate-status")
    assert "Held: golden questions regressed" in page.content()
    page.click("a.evergreen-activate")
    page.wait_for_selector("textarea[name=reason]")
    assert_accessible(page)
    page.fill("textarea[name=reason]", "Pricing moves to the price list page.")
    page.click("input[type=submit]")
    page.wait_for_selector(f"text=now serves release #{held.sequence}")
    assert Namespace.objects.get(pk=alpha.pk).active_release == held
    assert "Pricing moves to the price list page." in page.content()

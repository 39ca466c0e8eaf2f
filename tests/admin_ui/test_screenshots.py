"""The README's screenshots, taken from the demo in Chromium: the review page (both diff views), a prompt pack's
review page, each role's home, an editor typing, the metrics page and the Playground on a phone.

Every run takes them (each page is also checked with axe and for sideways scrolling) into the test's
temporary directory; with EVERGREEN_SCREENSHOTS=docs/screenshots the files land in the repository."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from knowledge.admin.forms import CONTENT_FIELDS
from knowledge.models import Entry, Namespace, TextKind, VersionState
from knowledge.services.content import VersionContent
from knowledge.services.texts import text_draft, text_save, text_submit
from knowledge.services.versions import version_draft_for_entry, version_save, version_submit
from tests.accessibility import assert_accessible
from tests.browser import PHONE, sideways_overflow
from tests.browser import admin_log_in as log_in
from tests.servingfixtures import demo, no_rate_limit

__all__ = ["demo", "no_rate_limit"]
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "demo-password"  # the demo fixture's


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("EVERGREEN_SCREENSHOTS") or tmp_path)


def shoot(page: Any, folder: Path, name: str) -> None:
    assert sideways_overflow(page) == 0
    assert_accessible(page)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a rendered page, not an empty one


def _revision_in_review(demo: Namespace) -> Any:
    """EG-202 v2 by the demo editor: one sentence reworded and a tag added, submitted for review."""
    from django.contrib.auth import get_user_model

    editor = get_user_model().objects.get(username="editor")
    entry = Entry.objects.get(namespace=demo, public_id="EG-202")
    draft = version_draft_for_entry(entry=entry, actor=editor)
    fields = {name: getattr(draft, name) for name in CONTENT_FIELDS}  # what the admin's form posts
    fields["body"] = draft.body.replace("2000", "3000", 1) + "\n\nMeasure the budget with the scan before raising it."
    fields["tags"] = [*draft.tags, "budget-scan"]
    content = VersionContent.build(**fields)
    version_save(version=draft, content=content, expected_lock_version=draft.lock_version, actor=editor)
    return version_submit(version=draft, actor=editor)


def test_the_readmes_screenshots(
    live_server: Any, page: Any, demo: Namespace, shots: Path, no_rate_limit: None
) -> None:
    from django.contrib.auth import get_user_model

    revision = _revision_in_review(demo)
    editor = get_user_model().objects.get(username="editor")
    prompt = text_draft(namespace=demo, kind=TextKind.PROMPT, key="chat", actor=editor)
    template = prompt.content["template"] + "\nQuote the entry ID after every sentence that uses it."
    text_save(version=prompt, content={"template": template}, expected_lock_version=prompt.lock_version, actor=editor)
    text_submit(version=prompt, actor=editor)
    base = live_server.url

    log_in(page, base, "admin", PASSWORD)  # who sees every panel
    shoot(page, shots, "dashboard")
    log_in(page, base, "reviewer", PASSWORD)
    page.goto(f"{base}/admin/knowledge/entryversion/{revision.pk}/change/")
    page.wait_for_selector(".eg-diff-unified")
    shoot(page, shots, "review-unified")
    page.click("text=side by side (split)")
    page.wait_for_selector(".eg-diff-split", state="visible")
    shoot(page, shots, "review-split")
    page.goto(f"{base}/admin/knowledge/textversion/{prompt.pk}/change/")
    page.wait_for_selector(".eg-diff-unified tr.eg-add")
    shoot(page, shots, "review-prompt-pack")

    log_in(page, base, "editor", PASSWORD)
    page.goto(f"{base}/admin/knowledge/entry/add/")
    page.select_option("#id_category", index=1)
    page.fill("#id_title", revision.title)
    page.fill("#id_body", "Ask for **2000 tokens** first; raise the budget only when `truncated` says so.")
    page.wait_for_selector("#eg-live-similar >> text=near duplicate")
    shoot(page, shots, "editor-live")

    page.goto(f"{base}/metrics.html")
    shoot(page, shots, "metrics")
    page.set_viewport_size(PHONE)
    page.goto(f"{base}/?topic=token%20budget&budget=1200#playground")
    page.wait_for_function("() => document.getElementById('pg-status').textContent.startsWith('matched=')")
    page.wait_for_selector("#pg-entries tbody tr a")
    shoot(page, shots, "phone-playground")
    revision.refresh_from_db()
    assert revision.state == VersionState.IN_REVIEW  # looking changed nothing

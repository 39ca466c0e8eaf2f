"""Each role's admin home: the panels its roles call for, only its own namespaces, bounded queries."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from knowledge.models import EntryVersion, EvaluationRun, Feedback, Namespace, Release, Role, TextKind, VersionState
from knowledge.services.entries import entry_create
from knowledge.services.texts import text_draft, text_publish_as_system, text_save, text_submit
from knowledge.services.versions import version_reject
from tests.admin_ui.conftest import as_user
from tests.factories import content, membership

pytestmark = pytest.mark.django_db
HOME = "/admin/"


def test_the_editor_sees_their_open_versions_and_a_rejection_with_its_reason(
    editor: Any, reviewer: Any, revision: EntryVersion
) -> None:
    page = as_user(editor).get(HOME).text
    assert 'id="my-drafts"' in page and f"{revision.entry.public_id} v2" in page
    assert 'id="awaiting-review"' not in page  # not a reviewer
    version_reject(version=revision, actor=reviewer, note="Cite the measurement for doubling.")
    page = as_user(editor).get(HOME).text
    assert "Recently rejected (1)" in page and "Cite the measurement for doubling." in page


def test_the_reviewer_sees_others_versions_waiting_but_no_editor_panels(reviewer: Any, revision: EntryVersion) -> None:
    page = as_user(reviewer).get(HOME).text
    assert "Awaiting my review (1)" in page and f"{revision.entry.public_id} v2" in page
    assert 'id="my-drafts"' not in page and 'id="rejected"' not in page


def test_stale_entries_feedback_and_quality_trend_of_own_namespaces_only(
    ns_a: Namespace, ns_b: Namespace, editor: Any, live: EntryVersion
) -> None:
    EntryVersion.objects.filter(pk=live.pk).update(updated=date(2020, 1, 1))
    Feedback.objects.create(namespace=ns_a, kind="outdated", entry_public_id=live.entry.public_id, message="<b>old</b>")
    Feedback.objects.create(namespace=ns_b, kind="missing", message="Beta-only report")
    for namespace in (ns_a, ns_b):
        release = Release.objects.create(
            namespace=namespace,
            sequence=1,
            knowledge_version="1.0.0",
            revision=date(2026, 9, 1),
            manifest_stored=[],
            inputs_hash=f"h-{namespace.slug}",
            built_at=datetime(2026, 9, 1, tzinfo=UTC),
        )
        EvaluationRun.objects.create(namespace=namespace, release=release, metrics={"ndcg_at_10": 0.61}, results=[])
    page = as_user(editor).get(HOME).text
    assert "Stale: updated over 12 months ago (1)" in page and "2020-01-01" in page
    assert "Open agent feedback (1)" in page and "&lt;b&gt;old&lt;/b&gt;" in page
    assert "Beta-only report" not in page and ">beta<" not in page
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="quality-alpha"' in page
    assert 'id="quality-beta"' not in page


def test_the_home_page_costs_the_same_with_many_rows(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    def queries() -> int:
        client = as_user(editor)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(HOME).status_code == 200
        return len(captured)

    fact = ns_a.categories.get(slug="fact")

    def add(count: int) -> None:
        for n in range(count):
            entry_create(namespace=ns_a, category=fact, content=content(title=f"Draft {n}"), actor=editor)
            text_draft(namespace=ns_a, kind=TextKind.DOC, key=f"page-{n}", actor=editor)
            Feedback.objects.create(namespace=ns_a, kind="other", message=f"Report {n}")

    add(10)  # more than a panel shows, so each panel also counts its rows
    some = queries()
    add(30)
    assert queries() == some <= 16


def test_feedback_about_an_entry_becomes_its_draft_in_one_click(editor: Any, live: EntryVersion) -> None:
    report = Feedback.objects.create(
        namespace=live.entry.namespace,
        kind="outdated",
        entry_public_id=live.entry.public_id,
        message="Budget is 4000 now",
    )
    url = reverse("admin:knowledge_feedback_draft", args=[report.pk])
    assert as_user(editor).get(url).status_code == 405
    response = as_user(editor).post(url)
    draft = live.entry.versions.get(state=VersionState.DRAFT)
    assert response["Location"].endswith(f"/entryversion/{draft.pk}/change/")
    report.refresh_from_db()
    assert report.status == Feedback.Status.DONE
    page = as_user(editor).get(response["Location"]).text
    assert "Agent feedback #" in page and "Budget is 4000 now" in page


def test_feedback_without_an_entry_prefills_a_new_entry(editor: Any, ns_a: Namespace) -> None:
    report = Feedback.objects.create(namespace=ns_a, kind="missing", query="rate limits", message="Nothing on limits")
    response = as_user(editor).post(reverse("admin:knowledge_feedback_draft", args=[report.pk]), follow=True)
    assert 'value="rate limits"' in response.text and "Nothing on limits</textarea>" in response.text
    report.refresh_from_db()
    assert report.status == Feedback.Status.OPEN  # handled once the editor saves something


def test_a_reviewer_cannot_draft_from_feedback(reviewer: Any, ns_a: Namespace) -> None:
    report = Feedback.objects.create(namespace=ns_a, kind="missing", message="Nothing on limits")
    assert as_user(reviewer).post(reverse("admin:knowledge_feedback_draft", args=[report.pk])).status_code == 403


def test_texts_in_review_wait_on_their_reviewers_home_and_not_on_their_authors_or_outsiders(
    ns_a: Namespace, editor: Any, reviewer: Any, outsider: Any
) -> None:
    text_publish_as_system(namespace=ns_a, kind=TextKind.PROMPT, key="chat", content={"template": "Old."}, note="t")
    draft = text_draft(namespace=ns_a, kind=TextKind.PROMPT, key="chat", actor=editor)
    text_save(version=draft, content={"template": "Cite entry IDs."}, expected_lock_version=0, actor=editor)
    text_submit(version=draft, actor=editor)
    label = "alpha/prompt/chat v2"
    as_reviewer = as_user(reviewer).get(HOME).text
    assert "Awaiting my review (1)" in as_reviewer and label in as_reviewer and "Cite entry IDs." in as_reviewer
    assert reverse("admin:knowledge_textversion_change", args=[draft.pk]) in as_reviewer
    membership(editor, ns_a, Role.REVIEWER)  # the author, now also a reviewer, is not asked to approve it
    as_author = as_user(editor).get(HOME).text
    assert "Awaiting my review (0)" in as_author and "My open versions (1)" in as_author and label in as_author
    assert label not in as_user(outsider).get(HOME).text

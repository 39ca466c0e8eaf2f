"""Scheduled go-live (Celery beat) and the demo namespace loader."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.management import call_command

from knowledge.models import (
    AuditRecord,
    Entry,
    EntryVersion,
    GoldenQuestion,
    Namespace,
    Release,
    ReviewedText,
    TextKind,
    VersionState,
)
from knowledge.services.entries import entry_create
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.texts import text_draft, text_save, text_submit
from knowledge.services.versions import version_approve, version_submit
from knowledge.tasks import versions_publish_due_task
from tests.configure import configure
from tests.factories import committed, content

pytestmark = pytest.mark.django_db


def test_an_approved_version_goes_live_at_its_scheduled_time(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    version = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer, publish_at=datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    with time_machine.travel(datetime(2026, 12, 1, 8, 59, tzinfo=UTC)), committed():
        assert versions_publish_due_task.apply().get() == 0
    assert EntryVersion.objects.get(pk=version.pk).state == VersionState.APPROVED
    with time_machine.travel(datetime(2026, 12, 1, 9, 1, tzinfo=UTC)), committed():
        assert versions_publish_due_task.apply().get() == 1
    assert EntryVersion.objects.get(pk=version.pk).state == VersionState.PUBLISHED
    assert AuditRecord.objects.filter(version=version, action="publish", note="Scheduled go-live.").exists()
    ns_a.refresh_from_db()
    assert ns_a.active_release is not None


def test_the_demo_loads_the_seed_table_once_and_again_changes_nothing(settings: Any) -> None:
    configure(settings, demo_password="")
    first, second = StringIO(), StringIO()
    with committed():
        call_command("load_demo", stdout=first)
    assert "created with the password" in first.getvalue()
    namespace = Namespace.objects.get(slug="evergreen")
    assert namespace.active_release is not None
    assert namespace.active_release.knowledge_version == "1.2.0"
    assert namespace.active_release.entry_count == 15
    assert [e["id"] for e in namespace.active_release.manifest["entries"]][:3] == ["EG-001", "EG-002", "EG-003"]
    with committed():
        call_command("load_demo", stdout=second)
    assert "password" not in second.getvalue()
    assert Release.objects.filter(namespace=namespace).count() == 1
    assert EntryVersion.objects.filter(entry__namespace=namespace).count() == 15
    versions = EntryVersion.objects.filter(entry__namespace=namespace).select_related("author", "reviewer")
    people = {(getattr(v.author, "username", None), getattr(v.reviewer, "username", None)) for v in versions}
    assert people == {("editor", "reviewer")}


def test_load_demo_serves_even_when_its_queued_build_has_no_worker_yet(settings: Any) -> None:
    """Outside `committed()` the on-commit build never runs, as with REDIS_URL set and no worker started."""
    configure(settings, demo_password="")
    out = StringIO()

    call_command("load_demo", stdout=out)

    namespace = Namespace.objects.get(slug="evergreen")
    assert namespace.active_release is not None
    assert f"ready (release #{namespace.active_release.sequence} v1.2.0)" in out.getvalue()


def test_load_demo_again_keeps_what_editors_changed(settings: Any) -> None:
    """QA: running load_demo again (every `make run` does) re-published the demo's EG-303 over an editor's
    published edit, unreviewed, and withdrew a doc page's draft in review."""
    configure(settings, demo_password="demo-password")
    with committed():
        call_command("load_demo", stdout=StringIO())
    namespace = Namespace.objects.get(slug="evergreen")
    editor, reviewer = (get_user_model().objects.get(username=name) for name in ("editor", "reviewer"))
    line = {"id": "EG-303", "title": "Token budget, edited", "body": "An editor's published change."}
    entries_import(
        namespace=namespace, items=entries_parse([json.dumps(line)]), actor=editor, reviewer=reviewer, publish=True
    )
    page = ReviewedText.objects.get(namespace=namespace, kind=TextKind.DOC, key="changelog").live_version
    assert page is not None
    draft = text_draft(namespace=namespace, kind=TextKind.DOC, key="changelog", actor=editor)
    draft = text_save(
        version=draft,
        content={**page.content, "body": "# Changelog\n\nAn editor's draft."},
        expected_lock_version=draft.lock_version,
        actor=editor,
    )
    text_submit(version=draft, actor=editor)
    GoldenQuestion.objects.filter(namespace=namespace).update(text="An editor's question")
    versions = EntryVersion.objects.filter(entry__namespace=namespace).count()

    with committed():
        call_command("load_demo", stdout=StringIO())

    live = Entry.objects.get(namespace=namespace, public_id="EG-303").live_version
    assert live is not None and (live.title, live.body) == ("Token budget, edited", "An editor's published change.")
    assert EntryVersion.objects.filter(entry__namespace=namespace).count() == versions
    draft.refresh_from_db()
    assert draft.state == VersionState.IN_REVIEW
    assert set(GoldenQuestion.objects.filter(namespace=namespace).values_list("text", flat=True)) == {
        "An editor's question"
    }

"""Path globs in the editorial admin and the management API (issue 16 §4): edited, checked, previewed, reviewed."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import EntryVersion, Namespace
from knowledge.services.entries import entry_create
from tests.factories import content

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(ns_a: Namespace, editor: Any) -> EntryVersion:
    return entry_create(
        namespace=ns_a, category=ns_a.categories.get(slug="rule"), content=content(title="API rule"), actor=editor
    )


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_of(draft: EntryVersion, paths: str) -> dict[str, str]:
    return {
        "title": draft.title,
        "summary": draft.summary,
        "body": draft.body,
        "tags": ", ".join(draft.tags),
        "aliases": "",
        "confidence": str(draft.confidence),
        "links": "",
        "updated": draft.updated.isoformat(),
        "paths": paths,
        "based_on": str(draft.lock_version),
    }


def test_an_editor_writes_one_glob_a_line_and_the_preview_says_what_an_agent_gets(
    editor: Any, draft: EntryVersion
) -> None:
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])
    before = draft.content_hash

    response = as_user(editor).post(url, form_of(draft, "src/api/**/*.py\n*.{ts,tsx}\n\n"))

    assert response.status_code == 302, response.text
    draft.refresh_from_db()
    assert draft.paths == ["src/api/**/*.py", "*.{ts,tsx}"]  # a comma inside braces stays one glob
    assert draft.content_hash != before  # reviewed content: a new hash, a diff, four eyes
    page = as_user(editor).get(url).text
    assert "Applies to <strong>src/api/**/*.py, *.{ts,tsx}</strong>" in page
    assert "With <code>paths=src/api/x.py, paths=x.ts</code> an agent gets this entry first" in page
    assert '<section class="eg-diff-field" aria-label="paths">' in page  # the diff shows the globs


def test_a_glob_that_cannot_work_is_a_form_error_and_nothing_is_saved(editor: Any, draft: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])

    response = as_user(editor).post(url, form_of(draft, "/etc/*.conf"))

    assert response.status_code == 200
    assert "globs are relative to the project root" in response.text
    draft.refresh_from_db()
    assert draft.paths == []


def test_the_preview_of_an_entry_without_globs_says_it_applies_everywhere(editor: Any, draft: EntryVersion) -> None:
    page = as_user(editor).get(reverse("admin:knowledge_entryversion_change", args=[draft.pk])).text

    assert "No path globs: the entry applies everywhere" in page

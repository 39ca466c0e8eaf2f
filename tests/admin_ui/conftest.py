"""A namespace with an entry that has a live version and a revision in review, for the review pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from knowledge.models import EntryVersion, Namespace
from knowledge.services.entries import entry_create
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from tests.browser import PHONE, chromium_page
from tests.factories import content


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def live(ns_a: Namespace, editor: Any, reviewer: Any) -> EntryVersion:
    """AL-000 v1, published."""
    first = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)
    version_submit(version=first, actor=editor)
    version_approve(version=first, actor=reviewer)
    return version_publish(version=first, actor=reviewer)


@pytest.fixture
def revision(live: EntryVersion, editor: Any) -> EntryVersion:
    """AL-000 v2 in review: one word of the body changed and a paragraph added."""
    draft = version_draft_for_entry(entry=live.entry, actor=editor)
    body = live.body.replace("raise the budget", "double the budget") + "\n\nA second paragraph, new in v2."
    draft = version_save(
        version=draft,
        content=content(body=body, tags=["token", "budget", "new"]),
        expected_lock_version=0,
        actor=editor,
    )
    return version_submit(version=draft, actor=editor)


@pytest.fixture
def page() -> Iterator[Any]:
    """Chromium at 1280×800."""
    yield from chromium_page()


@pytest.fixture
def phone() -> Iterator[Any]:
    """Chromium at a 390×844 phone's size."""
    yield from chromium_page(PHONE)
